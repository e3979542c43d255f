"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useState } from "react";
import { ErrorText } from "@/components/status";
import { CopyButton } from "@/components/ui/copy-button";
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Label } from "@/components/ui/label";
import { NativeSelect } from "@/components/ui/native-select";
import { Skeleton } from "@/components/ui/skeleton";
import { useTRPC } from "@/lib/trpc";
import { ConnectTabs } from "./connect-tabs";
import { Endpoint } from "./endpoint";
import { type CreatedKey, KEY_PLACEHOLDER } from "./snippets";

/**
 * The Connect dialog (issue 39 item 2): this deployment's REST base URL and MCP URL, and
 * copy-ready snippets for curl, the TypeScript SDK, `.env` and MCP clients, filled with
 * `createdKey` (right after it was made) or a placeholder with a hint to create a key.
 */
export function ConnectDialogBody({
  workspace,
  open,
  onOpenChange,
  createdKey = null,
  canCreateKeys,
}: {
  workspace: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  createdKey?: CreatedKey | null;
  /** Owners and admins: the hint links to the Keys page; others are told to ask. */
  canCreateKeys: boolean;
}) {
  const trpc = useTRPC();
  const connect = useQuery({ ...trpc.workspace.connect.queryOptions({ workspace }), enabled: open });
  const [picked, setPicked] = useState<string | null>(null);
  const groupId = useId();
  const groups = connect.data?.groups ?? [];
  // A scoped key reaches its own group; otherwise the one picked (default the first).
  const group = createdKey?.group ?? (picked !== null && groups.includes(picked) ? picked : (groups[0] ?? null));
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="min-w-0 sm:max-w-3xl">
        <DialogHeader>
          <DialogTitle>Connect</DialogTitle>
          <DialogDescription>
            Call this workspace from code or connect an agent. REST and the SDK take an API key; MCP clients take a key
            or sign in with OAuth.
          </DialogDescription>
        </DialogHeader>
        {connect.isPending && <Skeleton className="h-40 w-full" />}
        <ErrorText error={connect.error} prefix="Could not load the addresses: " />
        {connect.data !== undefined && (
          <div className="grid min-w-0 gap-5">
            <div className="grid min-w-0 gap-3 sm:grid-cols-2">
              <Endpoint
                label="REST API base URL"
                value={connect.data.apiUrl}
                hint="Routes under /v1, with Authorization: Bearer <key>."
              />
              <Endpoint
                label="MCP URL"
                value={connect.data.mcpUrl}
                hint="Streamable HTTP, one URL for every group; OAuth or a key."
              />
            </div>
            {createdKey !== null ? (
              <div
                role="status"
                className="grid min-w-0 gap-2 rounded-md border border-success/50 bg-success/10 p-3 text-sm"
              >
                <p>
                  Your new key is filled in below. It is shown only now: copy it somewhere safe.
                  {createdKey.group === null ? "" : ` It reaches group ${createdKey.group} only.`}
                </p>
                <div className="flex min-w-0 flex-wrap items-center gap-2">
                  <code data-testid="connect-key" className="min-w-0 flex-1 font-mono text-xs break-all">
                    {createdKey.key}
                  </code>
                  <CopyButton value={createdKey.key} label="Copy key" />
                </div>
              </div>
            ) : (
              <p className="rounded-md border border-warning/50 bg-warning/10 p-3 text-sm">
                The snippets show <code>{KEY_PLACEHOLDER}</code> where your key goes.{" "}
                {canCreateKeys ? (
                  <>
                    <Link
                      className="font-medium underline underline-offset-2"
                      href={`/w/${workspace}/keys`}
                      onClick={() => onOpenChange(false)}
                    >
                      Create a key
                    </Link>{" "}
                    and they are filled in with it.
                  </>
                ) : (
                  "Ask an owner or admin of the workspace for a key, or connect an MCP client with OAuth."
                )}
              </p>
            )}
            {groups.length === 0 ? (
              <p className="text-sm text-muted-foreground">
                No group yet: primitives live in groups, and an MCP client works in one.{" "}
                <Link
                  className="font-medium underline underline-offset-2"
                  href={`/w/${workspace}/data`}
                  onClick={() => onOpenChange(false)}
                >
                  Create a group
                </Link>
                .
              </p>
            ) : createdKey?.group != null ? (
              <p className="text-sm">
                Group: <span className="font-medium">{createdKey.group}</span> (the key's own)
              </p>
            ) : (
              <div className="grid max-w-xs gap-1">
                <Label htmlFor={groupId}>Group</Label>
                <NativeSelect id={groupId} value={group ?? ""} onChange={(e) => setPicked(e.target.value)}>
                  {groups.map((g) => (
                    <option key={g} value={g}>
                      {g}
                    </option>
                  ))}
                </NativeSelect>
                <span className="text-xs text-muted-foreground">
                  A key for every group names it in the X-Service-Group header on MCP.
                </span>
              </div>
            )}
            <ConnectTabs
              target={{
                apiUrl: connect.data.apiUrl,
                mcpUrl: connect.data.mcpUrl,
                key: createdKey?.key ?? null,
                group,
              }}
            />
          </div>
        )}
      </DialogContent>
    </Dialog>
  );
}
