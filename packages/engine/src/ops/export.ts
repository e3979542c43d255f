import { z } from "zod";
import { ServiceError } from "../core/errors.js";
import type { PrimitiveType } from "../core/types.js";
import type { DbStore } from "../primitives/db/store.js";
import { defineOp } from "./operation.js";

/** A file the REST layer streams to the caller and then deletes. */
export interface FileDownload {
  download: { path: string; filename: string; contentType: string };
}

const EXPORT_TOOL: Partial<Record<PrimitiveType, string>> = { db: "db_query", kv: "kv_get" };

/**
 * `GET /primitives/{id}/export` (and the db's own `/export`): a consistent SQLite file made
 * with SQLite's backup API while writers continue.
 */
export const primitiveExport = defineOp({
  name: "primitive.export",
  target: "primitive",
  tool: (p) => EXPORT_TOOL[p.type] ?? "storage_read",
  refusedWhilePaused: true,
  audited: true,
  metered: true,
  input: z.strictObject({}),
  async run(ctx): Promise<FileDownload> {
    const { primitive: p, services } = ctx;
    const path = services.files.tmpPath(`export-${p.id}`);
    const handle = services.files.handle(p.id, p.type);
    if (p.type === "db") {
      await (handle.store as DbStore).backup(path);
    } else if (p.type === "kv" && handle.db !== null) {
      await handle.db.backup(path);
    } else {
      throw new ServiceError(
        "wrong_type",
        `export applies to db, kv and storage primitives; '${p.name}' is a ${p.type}`,
      );
    }
    return { download: { path, filename: `${p.name}.sqlite`, contentType: "application/vnd.sqlite3" } };
  },
});
