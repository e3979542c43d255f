"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useRef, useState } from "react";
import { ConnectButton, ConnectDialog, type CreatedKey } from "@/components/connect/connect";
import { ErrorText, QueryState } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { CopyButton } from "@/components/ui/copy-button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { NativeSelect } from "@/components/ui/native-select";
import { SubmitButton } from "@/components/ui/submit-button";
import { Switch } from "@/components/ui/switch";
import { formatDate, formatRelative } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** A date as "3 days ago", the full date on hover. */
function When({ at, never = "never" }: { at: Date | null; never?: string }) {
  if (at === null) return <span>{never}</span>;
  return (
    <time dateTime={new Date(at).toISOString()} title={formatDate(at)}>
      {formatRelative(at)}
    </time>
  );
}

/** The expiry choices of the form (ms from now); "" = never. */
const EXPIRIES = [
  ["", "Never"],
  ["3600000", "In 1 hour"],
  ["86400000", "In 1 day"],
  ["604800000", "In 7 days"],
  ["2592000000", "In 30 days"],
] as const;

type Budget = { total: number } | { per: "day" | "month"; limit: number };

/** A budget as people read it: "1,000 operations", "1,000 operations a day". */
function budgetText(budget: Budget): string {
  return "total" in budget
    ? `${budget.total.toLocaleString("en")} operations`
    : `${budget.limit.toLocaleString("en")} operations a ${budget.per}`;
}

/** The budget fields: none, or a whole number in total or per day or month. */
function budgetOf(form: FormData): Budget | undefined {
  const n = String(form.get("budget") ?? "").trim();
  if (n === "") return undefined;
  const per = String(form.get("budgetPer") ?? "total");
  return per === "day" || per === "month" ? { per, limit: Number(n) } : { total: Number(n) };
}

/**
 * The form of a new key: name, group (or every group), tools (or every tool), read-only or not,
 * and its limits for agents: an expiry, an IP allowlist, an operation budget.
 */
function CreateKey({ workspace, onCreated }: { workspace: string; onCreated: (made: CreatedKey) => void }) {
  const trpc = useTRPC();
  const groups = useQuery(trpc.data.groups.queryOptions({ workspace }));
  const ids = {
    name: useId(),
    group: useId(),
    tools: useId(),
    readOnly: useId(),
    expires: useId(),
    ipAllow: useId(),
    budget: useId(),
    budgetPer: useId(),
  };
  const formRef = useRef<HTMLFormElement>(null);
  const [readOnly, setReadOnly] = useState(false);
  const create = useMutation(
    trpc.keys.create.mutationOptions({
      onSuccess: (made) => {
        formRef.current?.reset();
        setReadOnly(false);
        toast.success("Key created");
        onCreated({ key: made.key, group: made.group });
      },
    }),
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const tools = String(form.get("tools") ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");
    const group = String(form.get("group") ?? "");
    const expiresIn = String(form.get("expires") ?? "");
    const ipAllow = String(form.get("ipAllow") ?? "")
      .split(",")
      .map((c) => c.trim())
      .filter((c) => c !== "");
    create.reset();
    create.mutate({
      workspace,
      name: String(form.get("name") ?? "").trim() || undefined,
      group: group === "" ? undefined : group,
      tools: tools.length === 0 ? undefined : tools,
      readOnly,
      expiresAt: expiresIn === "" ? undefined : Date.now() + Number(expiresIn),
      ipAllow: ipAllow.length === 0 ? undefined : ipAllow,
      budget: budgetOf(form),
    });
  }
  return (
    <Card>
      <CardHeader>
        <CardTitle>Create a key</CardTitle>
        <CardDescription>
          For curl, the SDK and MCP clients. Narrow it to one group and a few tools where you can.
        </CardDescription>
      </CardHeader>
      <CardContent>
        <form ref={formRef} onSubmit={submit} className="grid gap-4 md:grid-cols-[1fr_1fr_2fr_auto] md:items-end">
          <div className="grid gap-1.5">
            <Label htmlFor={ids.name}>Name</Label>
            <Input id={ids.name} name="name" maxLength={80} placeholder="e.g. ci" />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.group}>Group</Label>
            <NativeSelect id={ids.group} name="group" defaultValue="">
              <option value="">Every group</option>
              {groups.data?.map((g) => (
                <option key={g.id} value={g.name}>
                  {g.name}
                </option>
              ))}
            </NativeSelect>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.tools}>Tools</Label>
            <Input id={ids.tools} name="tools" placeholder="Every tool, or e.g. kv_*, db_query" />
          </div>
          <div className="grid gap-4 md:col-span-4 md:grid-cols-[1fr_2fr_1fr_1fr] md:items-end">
            <div className="grid gap-1.5">
              <Label htmlFor={ids.expires}>Expires</Label>
              <NativeSelect id={ids.expires} name="expires" defaultValue="">
                {EXPIRIES.map(([ms, label]) => (
                  <option key={ms} value={ms}>
                    {label}
                  </option>
                ))}
              </NativeSelect>
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={ids.ipAllow}>IP allowlist</Label>
              <Input id={ids.ipAllow} name="ipAllow" placeholder="Any address, or e.g. 10.0.0.0/8, ::1/128" />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={ids.budget}>Budget (operations)</Label>
              <Input id={ids.budget} name="budget" type="number" min={1} step={1} placeholder="No budget" />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={ids.budgetPer}>Budget period</Label>
              <NativeSelect id={ids.budgetPer} name="budgetPer" defaultValue="total">
                <option value="total">In total</option>
                <option value="day">Per day (UTC)</option>
                <option value="month">Per month (UTC)</option>
              </NativeSelect>
            </div>
          </div>
          <div className="flex items-start gap-3 md:col-span-3">
            <Switch
              id={ids.readOnly}
              checked={readOnly}
              onCheckedChange={setReadOnly}
              aria-describedby={`${ids.readOnly}-hint`}
            />
            <div className="grid gap-0.5 text-sm">
              <Label htmlFor={ids.readOnly}>Read-only</Label>
              <p id={`${ids.readOnly}-hint`} className="text-muted-foreground">
                Every call that writes is refused, whatever the key's tools: for agents that should only look.
              </p>
            </div>
          </div>
          <SubmitButton disabled={create.isPending}>{create.isPending ? "Creating…" : "Create key"}</SubmitButton>
          <ErrorText error={create.error} className="md:col-span-4" />
          <ErrorText error={groups.error} prefix="Could not load the groups: " className="md:col-span-4" />
        </form>
      </CardContent>
    </Card>
  );
}

/**
 * API keys: a new key shown exactly once (copy, and the Connect dialog opens with it), the list
 * (name, start, scope, creator by email, created and last used relative), revoke after a confirm.
 */
export function KeysPanel({ workspace, canManage }: { workspace: string; canManage: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.keys.list.queryOptions({ workspace }));
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [connecting, setConnecting] = useState(false);
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.keys.list.queryKey({ workspace }) });
    void queryClient.invalidateQueries({ queryKey: trpc.workspace.overview.queryKey({ workspace }) });
  };
  const revoke = useMutation(trpc.keys.revoke.mutationOptions({ onSuccess: refresh }));
  return (
    <div className="grid gap-6">
      {canManage && (
        <CreateKey
          workspace={workspace}
          onCreated={(made) => {
            setCreated(made);
            setConnecting(true);
            refresh();
          }}
        />
      )}
      {created !== null && (
        <div role="status" className="grid min-w-0 gap-2 rounded-lg border border-warning/50 bg-warning/10 p-4 text-sm">
          <p className="font-medium">Copy your new key now: it is shown only once.</p>
          <div className="flex min-w-0 flex-wrap items-center gap-2">
            <code data-testid="new-key" className="min-w-0 flex-1 break-all font-mono text-xs">
              {created.key}
            </code>
            <CopyButton value={created.key} label="Copy key" />
            <Button variant="outline" size="sm" onClick={() => setConnecting(true)}>
              Connect with this key
            </Button>
          </div>
        </div>
      )}
      <Card>
        <CardHeader className="flex-row flex-wrap items-start justify-between gap-3">
          <div className="grid gap-1.5">
            <CardTitle>API keys</CardTitle>
            <CardDescription>Each key's scope, who made it and when it was last used.</CardDescription>
          </div>
          <ConnectButton workspace={workspace} canCreateKeys={canManage} variant="outline" />
        </CardHeader>
        <CardContent>
          <QueryState query={keys} empty="No keys yet." loading="Loading keys…" />
          {keys.data !== undefined && keys.data.length > 0 && (
            <ul className="divide-y">
              {keys.data.map((k) => (
                <li key={k.id} className="flex flex-wrap items-start justify-between gap-x-4 gap-y-2 py-3">
                  <div className="grid min-w-0 flex-1 gap-1 text-sm">
                    <p className="flex min-w-0 flex-wrap items-center gap-2">
                      <span className="font-medium break-all">{k.name ?? "Unnamed key"}</span>
                      <code className="rounded bg-muted px-1.5 py-0.5 font-mono text-xs">{k.start}…</code>
                      {k.read_only && <Badge variant="outline">read-only</Badge>}
                      {k.expires_at !== null && new Date(k.expires_at).getTime() <= Date.now() && (
                        <Badge variant="secondary">expired</Badge>
                      )}
                      {k.revoked_at !== null && <Badge variant="secondary">revoked</Badge>}
                    </p>
                    <p className="text-muted-foreground break-words">
                      {k.group === null ? "Every group" : `Group ${k.group}`} ·{" "}
                      {k.tools === null ? "every tool" : k.tools.join(", ")}
                    </p>
                    {(k.expires_at !== null || k.ip_allow !== null || k.budget !== null) && (
                      <p className="text-muted-foreground break-words" data-testid="key-limits">
                        {[
                          k.expires_at === null ? null : `Expires ${formatDate(k.expires_at, { time: true })}`,
                          k.ip_allow === null ? null : `IP ${k.ip_allow.join(", ")}`,
                          k.budget === null ? null : `Budget ${budgetText(k.budget)}`,
                        ]
                          .filter((part) => part !== null)
                          .join(" · ")}
                      </p>
                    )}
                    <p className="text-muted-foreground break-words">
                      By {k.created_by_email ?? k.created_by ?? "unknown"} · created <When at={k.created_at} /> · last
                      used <When at={k.last_used_at} />
                    </p>
                  </div>
                  {k.revoked_at === null && canManage && (
                    <ConfirmDialog
                      trigger={
                        <Button variant="outline" size="sm" aria-label={`Revoke key ${k.start}`}>
                          Revoke
                        </Button>
                      }
                      title={`Revoke ${k.name ?? `key ${k.start}…`}?`}
                      description={`Every call made with ${k.start}… fails from now on (401). This cannot be undone.`}
                      confirmLabel="Revoke key"
                      onConfirm={async () => {
                        await revoke.mutateAsync({ workspace, id: k.id });
                        toast.success(`Key ${k.start}… revoked`);
                      }}
                    />
                  )}
                </li>
              ))}
            </ul>
          )}
        </CardContent>
      </Card>
      <ConnectDialog
        workspace={workspace}
        open={connecting}
        onOpenChange={setConnecting}
        createdKey={created}
        canCreateKeys={canManage}
      />
    </div>
  );
}
