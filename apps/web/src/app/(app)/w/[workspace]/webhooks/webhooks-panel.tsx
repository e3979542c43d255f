"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ErrorText, QueryState } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { CopyButton } from "@/components/ui/copy-button";
import { formatDate, formatRelative } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";
import { type CreatedWebhook, CreateWebhook } from "./create-webhook";
import { DeliveryLog } from "./delivery-log";

interface Endpoint {
  id: string;
  url: string;
  group: string | null;
  primitive: string | null;
  primitive_info: { name: string; type: string; group: string } | null;
  filter: { types?: string[]; ops?: string[]; prefix?: string } | null;
  description: string | null;
  created_at: number;
  failing_since: number | null;
  disabled_at: number | null;
  disabled_reason: string | null;
}

const since = (at: number) => (
  <time dateTime={new Date(at).toISOString()} title={formatDate(at, { time: true })}>
    {formatRelative(at)}
  </time>
);

/** Active, failing since …, or disabled (with why). */
function Status({ endpoint }: { endpoint: Endpoint }) {
  if (endpoint.disabled_at !== null) {
    return (
      <span className="flex flex-wrap items-center gap-2" data-testid="webhook-status">
        <Badge variant="destructive">disabled</Badge>
        <span className="text-muted-foreground">
          {since(endpoint.disabled_at)}
          {endpoint.disabled_reason !== null && `: ${endpoint.disabled_reason}`}
        </span>
      </span>
    );
  }
  if (endpoint.failing_since !== null) {
    return (
      <span className="flex flex-wrap items-center gap-2" data-testid="webhook-status">
        <Badge variant="warning">failing</Badge>
        <span className="text-muted-foreground">since {since(endpoint.failing_since)}</span>
      </span>
    );
  }
  return (
    <span data-testid="webhook-status">
      <Badge variant="success">active</Badge>
    </span>
  );
}

/** "Group app", or "Primitive cache (kv)" linked to its page. */
function Subject({ workspace, endpoint }: { workspace: string; endpoint: Endpoint }) {
  if (endpoint.group !== null) return <>Group {endpoint.group}</>;
  const info = endpoint.primitive_info;
  if (info === null) return <>Primitive {endpoint.primitive}</>;
  return (
    <>
      Primitive{" "}
      <Link
        href={`/w/${workspace}/data/${encodeURIComponent(info.group)}/${endpoint.primitive}`}
        className="underline underline-offset-4"
      >
        {info.name}
      </Link>{" "}
      ({info.type}, group {info.group})
    </>
  );
}

/** "types kv, storage · ops set · prefix user:" or "every change". */
function filterText(filter: Endpoint["filter"]): string {
  if (filter === null) return "every change";
  return [
    filter.types && `types ${filter.types.join(", ")}`,
    filter.ops && `operations ${filter.ops.join(", ")}`,
    filter.prefix !== undefined && `prefix ${filter.prefix}`,
  ]
    .filter(Boolean)
    .join(" · ");
}

/**
 * The workspace's webhook endpoints (owners and admins): add one (its secret shown once, with a
 * copy button), each one's status, subject and filter, its delivery log, enable a disabled one,
 * delete after a confirm.
 */
export function WebhooksPanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.webhooks.list.queryOptions({ workspace }));
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ workspace }) });
  const remove = useMutation(trpc.webhooks.delete.mutationOptions({ onSuccess: refresh }));
  const enable = useMutation(
    trpc.webhooks.enable.mutationOptions({
      onSuccess: () => {
        toast.success("Endpoint enabled");
        refresh();
      },
    }),
  );
  return (
    <div className="grid gap-6">
      <CreateWebhook
        workspace={workspace}
        onCreated={(made) => {
          setCreated(made);
          refresh();
        }}
      />
      {created !== null && (
        <div role="status" className="grid min-w-0 gap-2 rounded-lg border border-warning/50 bg-warning/10 p-4 text-sm">
          <p className="font-medium">Copy the signing secret now: it is shown only once.</p>
          <p className="text-muted-foreground break-all">
            Verify each delivery's <code className="font-mono text-xs">webhook-signature</code> to {created.url} with it
            (Standard Webhooks).
          </p>
          <div className="flex min-w-0 flex-wrap items-center gap-2">
            <code data-testid="new-secret" className="min-w-0 flex-1 break-all font-mono text-xs">
              {created.secret}
            </code>
            <CopyButton value={created.secret} label="Copy secret" />
            <Button variant="outline" size="sm" onClick={() => setCreated(null)}>
              Done
            </Button>
          </div>
        </div>
      )}
      <Card>
        <CardHeader>
          <CardTitle>Endpoints</CardTitle>
          <CardDescription>
            Failed deliveries are retried for 24 hours; an endpoint failing that long is disabled and its owners told by
            mail.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <QueryState query={list} empty="No endpoints yet." loading="Loading endpoints…" />
          <ErrorText error={enable.error} />
          {list.data !== undefined && list.data.length > 0 && (
            <ul className="divide-y" aria-label="Webhook endpoints">
              {list.data.map((e) => (
                <li key={e.id} data-testid="webhook" className="grid gap-3 py-3">
                  <div className="flex flex-col gap-2 sm:flex-row sm:items-start sm:justify-between sm:gap-4">
                    <div className="grid min-w-0 flex-1 gap-1 text-sm">
                      <p className="font-medium break-all">{e.url}</p>
                      <Status endpoint={e} />
                      <p className="text-muted-foreground break-words" data-testid="webhook-subject">
                        <Subject workspace={workspace} endpoint={e} /> · {filterText(e.filter)}
                      </p>
                      {e.description !== null && <p className="text-muted-foreground break-words">{e.description}</p>}
                      <p className="text-muted-foreground">
                        <code className="font-mono text-xs">{e.id}</code> · created {since(e.created_at)}
                      </p>
                    </div>
                    <div className="flex flex-wrap gap-2">
                      <Button
                        variant="outline"
                        size="sm"
                        aria-expanded={open === e.id}
                        aria-label={`Deliveries of ${e.url}`}
                        onClick={() => setOpen(open === e.id ? null : e.id)}
                      >
                        Deliveries
                      </Button>
                      {e.disabled_at !== null && (
                        <Button
                          variant="outline"
                          size="sm"
                          disabled={enable.isPending}
                          onClick={() => enable.mutate({ workspace, id: e.id })}
                        >
                          Enable
                        </Button>
                      )}
                      <ConfirmDialog
                        trigger={
                          <Button variant="outline" size="sm" aria-label={`Delete endpoint ${e.url}`}>
                            Delete
                          </Button>
                        }
                        title="Delete this endpoint?"
                        description={`Nothing more is sent to ${e.url}; its delivery log is deleted with it. This cannot be undone.`}
                        confirmLabel="Delete endpoint"
                        onConfirm={async () => {
                          await remove.mutateAsync({ workspace, id: e.id });
                          toast.success("Endpoint deleted");
                        }}
                      />
                    </div>
                  </div>
                  {open === e.id && <DeliveryLog workspace={workspace} endpoint={e.id} />}
                </li>
              ))}
            </ul>
          )}
        </CardContent>
      </Card>
    </div>
  );
}
