"use client";
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { PageHeader } from "@/components/page-header";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Skeleton } from "@/components/ui/skeleton";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@/components/ui/tabs";
import { formatBytes } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { DbConsole, SnapshotsTab, TypeBrowser } from "../../browsers/index";

const PrimitiveSettings = dynamic(() => import("./primitive-settings").then((m) => m.PrimitiveSettings), {
  loading: () => <Skeleton className="h-40" />,
});

const TABS = ["browse", "sql", "snapshots", "settings"] as const;
type Tab = (typeof TABS)[number];

/** The primitive's header and tabs; the chosen tab is kept in the address (`?tab=`). */
export function PrimitiveView(props: {
  workspace: string;
  group: string;
  primitive: string;
  tab?: string;
  admin: boolean;
}) {
  const { workspace, primitive, admin } = props;
  const trpc = useTRPC();
  const router = useRouter();
  const info = useQuery({ ...trpc.primitive.get.queryOptions({ workspace, primitive }), retry: false });
  const p = info.data;
  const available = TABS.filter((t) => t !== "sql" || p?.type === "db");
  const wanted = (TABS as readonly string[]).includes(props.tab ?? "") ? (props.tab as Tab) : "browse";
  const [tab, setTab] = useState<Tab>(wanted);
  // Moved to another group (or a link with the wrong group): the address follows the primitive.
  useEffect(() => {
    if (p !== undefined && p.group !== props.group) {
      router.replace(
        `/w/${workspace}/data/${encodeURIComponent(p.group)}/${p.id}${tab === "browse" ? "" : `?tab=${tab}`}`,
      );
    }
  }, [p, props.group, router, workspace, tab]);
  function choose(value: string) {
    const next = value as Tab;
    setTab(next);
    const url = new URL(window.location.href);
    if (next === "browse") url.searchParams.delete("tab");
    else url.searchParams.set("tab", next);
    window.history.replaceState(null, "", url);
  }
  if (info.isPending) return <Skeleton className="h-40" />;
  if (p === undefined) return <ErrorText error={info.error} />;
  const current = tab === "sql" && p.type !== "db" ? "browse" : tab;
  return (
    <div className="space-y-6">
      <PageHeader
        title={p.name}
        description={
          <span className="inline-flex flex-wrap items-center gap-2">
            <Badge variant="secondary">{p.type}</Badge>
            {p.paused && <Badge variant="warning">paused</Badge>}
            <span>{formatBytes(p.size_bytes)}</span>
            <span className="font-mono text-xs">{p.id}</span>
          </span>
        }
      />
      <Tabs value={current} onValueChange={choose}>
        <TabsList aria-label="Primitive">
          {available.map((t) => (
            <TabsTrigger key={t} value={t}>
              {t === "sql" ? "SQL" : `${t.slice(0, 1).toUpperCase()}${t.slice(1)}`}
            </TabsTrigger>
          ))}
        </TabsList>
        <TabsContent value="browse">
          <TypeBrowser workspace={workspace} primitive={p} />
        </TabsContent>
        {p.type === "db" && (
          <TabsContent value="sql">
            <DbConsole workspace={workspace} primitive={p.id} />
          </TabsContent>
        )}
        <TabsContent value="snapshots">
          <SnapshotsTab workspace={workspace} primitive={p.id} />
        </TabsContent>
        <TabsContent value="settings">
          <PrimitiveSettings workspace={workspace} primitive={p} admin={admin} />
        </TabsContent>
      </Tabs>
    </div>
  );
}
