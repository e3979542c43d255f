"use client";
import { FsBrowser } from "./fs";
import { KvBrowser } from "./kv";
import { MemoryBrowser } from "./memory";
import { QueueBrowser } from "./queue";
import { StorageBrowser } from "./storage";
import { VaultBrowser } from "./vault";

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
    default:
      return <p className="text-sm text-muted-foreground">Use the SQL tab to query this database.</p>;
  }
}
