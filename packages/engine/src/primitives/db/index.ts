import type { PrimitiveDefinition } from "../definition.js";
import { DbStore } from "./store.js";

export const dbDefinition: PrimitiveDefinition<DbStore> = {
  type: "db",
  ownsFile: true,
  open: (_db, env) => new DbStore(env.sqlHost, env.path, env.dir, env.syncs, env.changed),
  // Kept by the SQL host in the user's database (sql-host/host-changes.ts), read here.
  changeLog: (store) => store.changeLog(),
  synced: (store) => store.synced(),
  close: async (store) => {
    await store.close();
  },
  // Only the SQL host opens the file: snapshots and restores go through it. Branches are not
  // part of a snapshot; a restore keeps them (their promote then needs `force`).
  backup: (store, dest) => store.backup(dest),
  restore: (store, src) => store.restore(src),
  // Tables (and views are not counted).
  items: async (store) => (await store.tables()).filter((t) => t.type === "table").length,
};

export { MAX_RESULT_BYTES, MAX_RESULT_ROWS, STATEMENT_TIMEOUT_MS } from "../../sql-host/protocol.js";
export { DB_OPERATIONS } from "./ops.js";
export { DbStore } from "./store.js";
