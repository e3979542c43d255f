"use client";
import dynamic from "next/dynamic";
import { Skeleton } from "@/components/ui/skeleton";

// Each type's browser is its own file and chunk: a primitive's page loads only its type's.
const loading = () => <Skeleton className="h-32" />;
const KvBrowser = dynamic(() => import("./kv").then((m) => m.KvBrowser), { loading });
const QueueBrowser = dynamic(() => import("./queue").then((m) => m.QueueBrowser), { loading });
const VaultBrowser = dynamic(() => import("./vault").then((m) => m.VaultBrowser), { loading });
const MemoryBrowser = dynamic(() => import("./memory").then((m) => m.MemoryBrowser), { loading });
const FsBrowser = dynamic(() => import("./fs").then((m) => m.FsBrowser), { loading });
const StorageBrowser = dynamic(() => import("./storage").then((m) => m.StorageBrowser), { loading });
const DbBrowser = dynamic(() => import("./db").then((m) => m.DbBrowser), { loading });
/** The "SQL" tab (db primitives). */
export const DbConsole = dynamic(() => import("./db").then((m) => m.DbConsole), { loading });
/** The "Snapshots" tab. */
export const SnapshotsTab = dynamic(() => import("./snapshots").then((m) => m.SnapshotsTab), { loading });

/** The "Browse" tab: the type's own browser (one file per type in this folder). */
export function TypeBrowser({
  workspace,
  primitive,
}: {
  workspace: string;
  primitive: { id: string; name: string; type: string };
}) {
  switch (primitive.type) {
    case "kv":
      return <KvBrowser workspace={workspace} primitive={primitive} />;
    case "queue":
      return <QueueBrowser workspace={workspace} primitive={primitive.id} />;
    case "vault":
      return <VaultBrowser workspace={workspace} primitive={primitive.id} />;
    case "memory":
      return <MemoryBrowser workspace={workspace} primitive={primitive.id} />;
    case "fs":
      return <FsBrowser workspace={workspace} primitive={primitive.id} />;
    case "storage":
      return <StorageBrowser workspace={workspace} primitive={primitive.id} />;
    case "db":
      return <DbBrowser workspace={workspace} primitive={primitive.id} />;
    default:
      return <p className="text-sm text-muted-foreground">Use the SQL tab to query this database.</p>;
  }
}
