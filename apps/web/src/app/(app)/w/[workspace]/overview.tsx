"use client";
import { useQuery } from "@tanstack/react-query";
import { CheckCircle2Icon, CircleIcon } from "lucide-react";
import Link from "next/link";
import { type ReactNode, useState } from "react";
import { ConnectButton, ConnectDialog } from "@/components/connect/connect";
import { Endpoint } from "@/components/connect/endpoint";
import { PageHeader } from "@/components/page-header";
import { ErrorText } from "@/components/status";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Skeleton } from "@/components/ui/skeleton";
import { formatNumber } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { cn } from "@/lib/utils";
import { canSee, type PageId, WORKSPACE_PAGES, type WorkspaceRole, workspaceHref } from "@/lib/workspace-nav";

/** One figure of the workspace, linking to where it is managed. */
function Stat({ label, value, href, className }: { label: string; value: number; href: string; className?: string }) {
  return (
    <Link
      href={href}
      className={cn(
        "rounded-lg border bg-card p-4 text-card-foreground shadow-xs hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none",
        className,
      )}
    >
      <span className="block text-sm text-muted-foreground">{label}</span>
      <span className="mt-1 block text-2xl font-semibold tabular-nums">{formatNumber(value)}</span>
    </Link>
  );
}

/** A next step: checked off once done, else what to do about it. */
function Step({ done, title, children }: { done: boolean; title: string; children: ReactNode }) {
  return (
    <li className="flex gap-3 py-3">
      {done ? (
        <CheckCircle2Icon className="mt-0.5 size-5 shrink-0 text-success" aria-hidden />
      ) : (
        <CircleIcon className="mt-0.5 size-5 shrink-0 text-muted-foreground" aria-hidden />
      )}
      <div className="grid min-w-0 flex-1 gap-1">
        <p className={done ? "font-medium text-muted-foreground line-through" : "font-medium"}>
          {title}
          <span className="sr-only">{done ? " (done)" : " (to do)"}</span>
        </p>
        {!done && <div className="text-sm text-muted-foreground">{children}</div>}
      </div>
    </li>
  );
}

const SHOWN_GROUPS = 8;

/** The groups with their primitive counts, each a link to its primitives. */
function GroupsCard({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const groups = useQuery(trpc.data.groups.queryOptions({ workspace }));
  const list = groups.data ?? [];
  return (
    <Card>
      <CardHeader>
        <CardTitle>Groups</CardTitle>
        <CardDescription>Where the primitives live; a key or an agent reaches one group or all.</CardDescription>
      </CardHeader>
      <CardContent>
        <ErrorText error={groups.error} prefix="Could not load the groups: " />
        {groups.isPending && <Skeleton className="h-20 w-full" />}
        <ul className="divide-y text-sm">
          {list.slice(0, SHOWN_GROUPS).map((g) => (
            <li key={g.id}>
              <Link
                href={`${workspaceHref(workspace, "data")}/${encodeURIComponent(g.name)}`}
                className="flex items-center justify-between gap-3 rounded-sm py-2 hover:underline focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none"
              >
                <span className="min-w-0 truncate font-medium">{g.name}</span>
                <span className="shrink-0 text-muted-foreground">
                  {formatNumber(g.primitives)} {g.primitives === 1 ? "primitive" : "primitives"}
                </span>
              </Link>
            </li>
          ))}
        </ul>
        {list.length > SHOWN_GROUPS && (
          <Link href={workspaceHref(workspace, "data")} className="mt-2 inline-block text-sm underline">
            All {formatNumber(list.length)} groups
          </Link>
        )}
      </CardContent>
    </Card>
  );
}

/** This deployment's addresses, and the snippets a click away. */
function EndpointsCard({ workspace, onConnect }: { workspace: string; onConnect: () => void }) {
  const trpc = useTRPC();
  const connect = useQuery(trpc.workspace.connect.queryOptions({ workspace }));
  return (
    <Card>
      <CardHeader>
        <CardTitle>Endpoints</CardTitle>
        <CardDescription>REST for code and scripts, MCP for agents.</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-4">
        <ErrorText error={connect.error} prefix="Could not load the addresses: " />
        {connect.isPending && <Skeleton className="h-20 w-full" />}
        {connect.data !== undefined && (
          <>
            <Endpoint label="REST API base URL" value={connect.data.apiUrl} />
            <Endpoint label="MCP URL" value={connect.data.mcpUrl} />
          </>
        )}
        <div>
          <Button variant="outline" size="sm" onClick={onConnect}>
            Snippets for curl, the SDK and MCP clients
          </Button>
        </div>
      </CardContent>
    </Card>
  );
}

/** What the data roles see: the counts, the next steps of a new workspace, Connect. */
function DataOverview({ workspace, role }: { workspace: string; role: WorkspaceRole }) {
  const trpc = useTRPC();
  const overview = useQuery(trpc.workspace.overview.queryOptions({ workspace }));
  const [connecting, setConnecting] = useState(false);
  const admin = role === "owner" || role === "admin";
  if (overview.isPending) return <Skeleton className="h-48 w-full" />;
  if (overview.error !== null) return <ErrorText error={overview.error} prefix="Could not load the overview: " />;
  const o = overview.data;
  const steps = { group: o.groups > 0, key: o.keys > 0, agent: o.connections > 0 || o.keys_used > 0 };
  const allDone = steps.group && steps.key && steps.agent;
  const ask = <span>Ask an owner or admin of the workspace.</span>;
  return (
    <div className="grid gap-6">
      {!allDone && (
        <Card>
          <CardHeader>
            <CardTitle>Next steps</CardTitle>
            <CardDescription>Get this workspace from empty to an agent using it.</CardDescription>
          </CardHeader>
          <CardContent>
            <ol className="divide-y" aria-label="Next steps">
              <Step done={steps.group} title="Create a group">
                <p>Groups hold primitives (databases, key-value stores, queues, files…); keys and agents reach one.</p>
                {admin ? (
                  <Button asChild size="sm" variant="outline" className="mt-2">
                    <Link href={workspaceHref(workspace, "data")}>Create a group</Link>
                  </Button>
                ) : (
                  ask
                )}
              </Step>
              <Step done={steps.key} title="Create an API key">
                <p>For curl, the SDK and MCP clients; shown once, with the snippets filled in.</p>
                {admin ? (
                  <Button asChild size="sm" variant="outline" className="mt-2">
                    <Link href={workspaceHref(workspace, "keys")}>Create a key</Link>
                  </Button>
                ) : (
                  ask
                )}
              </Step>
              <Step done={steps.agent} title="Connect an agent">
                <p>An MCP client (Claude Desktop, Cursor, VS Code) with OAuth or a key, or your code over REST.</p>
                <Button size="sm" variant="outline" className="mt-2" onClick={() => setConnecting(true)}>
                  Show how to connect
                </Button>
              </Step>
            </ol>
          </CardContent>
        </Card>
      )}
      <section aria-label="At a glance" className="grid grid-cols-2 gap-3 md:grid-cols-3 xl:grid-cols-5">
        <Stat label="Groups" value={o.groups} href={workspaceHref(workspace, "data")} />
        <Stat label="Primitives" value={o.primitives} href={workspaceHref(workspace, "data")} />
        <Stat label="API keys" value={o.keys} href={workspaceHref(workspace, "keys")} />
        <Stat label="Connected apps" value={o.connections} href={workspaceHref(workspace, "apps")} />
        <Stat
          label="Operations this month"
          value={o.operations}
          href={workspaceHref(workspace, "usage")}
          className="col-span-2 md:col-span-1"
        />
      </section>
      {o.groups > 0 && (
        <div className="grid gap-6 lg:grid-cols-2">
          <GroupsCard workspace={workspace} />
          <EndpointsCard workspace={workspace} onConnect={() => setConnecting(true)} />
        </div>
      )}
      <ConnectDialog workspace={workspace} open={connecting} onOpenChange={setConnecting} canCreateKeys={admin} />
    </div>
  );
}

/** What the billing role's pages hold (it sees no data). */
const BILLING_ROLE_PAGES: Partial<Record<PageId, string>> = {
  usage: "This month's operations and storage against the plan.",
  billing: "The plan, the subscription and invoices.",
  members: "Who is in this workspace, and their roles.",
};

/**
 * The workspace's Overview (every role): at a glance, "Connect", and for a new workspace the
 * next steps (a group, a key, an agent), each checked off once done. The billing role sees no
 * data: links to what it may open.
 */
export function Overview({
  workspace,
  ws,
}: {
  workspace: string;
  ws: { role: WorkspaceRole; name: string; plan: string };
}) {
  const data = canSee(ws.role, "data");
  const admin = ws.role === "owner" || ws.role === "admin";
  const pages = WORKSPACE_PAGES.filter((p) => p.id !== "overview" && canSee(ws.role, p.id));
  return (
    <div className="space-y-6">
      <PageHeader
        title={ws.name}
        description={`${ws.plan[0]?.toUpperCase()}${ws.plan.slice(1)} plan · you are ${ws.role}`}
        actions={data ? <ConnectButton workspace={workspace} canCreateKeys={admin} /> : undefined}
      />
      {data ? (
        <DataOverview workspace={workspace} role={ws.role} />
      ) : (
        <div className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3">
          {pages.map((p) => (
            <Card key={p.id}>
              <CardHeader>
                <CardTitle>{p.title}</CardTitle>
                <CardDescription>{BILLING_ROLE_PAGES[p.id] ?? ""}</CardDescription>
              </CardHeader>
              <CardContent>
                <Button asChild size="sm" variant="outline">
                  <Link href={workspaceHref(workspace, p.id)}>Open {p.title.toLowerCase()}</Link>
                </Button>
              </CardContent>
            </Card>
          ))}
        </div>
      )}
    </div>
  );
}
