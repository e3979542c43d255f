import type { PrimitiveDefinition } from "../definition.js";
import { DbStore } from "./store.js";

export const dbDefinition: PrimitiveDefinition<DbStore> = {
  type: "db",
  ownsFile: true,
  open: (_db, env) => new DbStore(env.sqlHost, env.path, env.dir),
  close: async (store) => {
    await store.close();
  },
  // Tables (and views are not counted).
  items: async (store) => (await store.tables()).filter((t) => t.type === "table").length,
};

export { DB_OPERATIONS } from "./ops.js";
export { MAX_RESULT_BYTES, MAX_RESULT_ROWS, STATEMENT_TIMEOUT_MS } from "./protocol.js";
export { DbStore } from "./store.js";
