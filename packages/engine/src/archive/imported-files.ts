import { statSync } from "node:fs";
import type { PrimitiveType } from "@prim/wire";
import { ServiceError } from "@prim/wire";
import type { EngineServices } from "../primitives/services.js";
import type { DbLocation, FileCheck } from "../sql-host/protocol.js";

/**
 * Time a file's check gets beyond the statement limit, per byte: SQLite's quick_check reads
 * every page (measured ~800 MB/s from the page cache), so 64 MiB/s leaves room for a cold disk
 * and a loaded machine while still bounding what one file can make a host do.
 */
export const CHECK_BYTES_PER_MS = 64 * 1024;

/**
 * Checks each SQLite file an archive brought before any of it is adopted (issue 35): a file
 * from outside must never run anything it brings in this process. Each one is checked in a SQL
 * host process under the statement time limit (plus time for its size) — read-only, with
 * `trusted_schema=OFF`, its schema compared with the one the type's own code makes (every type
 * but `db`, whose schema is the user's), then `PRAGMA quick_check` (sql-host/file-check.ts).
 * Anything wrong is 400 `invalid_request` naming the entry; nothing was imported.
 */
export async function checkImportedFiles(
  services: EngineServices,
  entries: readonly { entry: string; type: PrimitiveType }[],
  staged: readonly string[],
): Promise<void> {
  for (const [i, { entry, type }] of entries.entries()) {
    const file = staged[i] as string;
    const verdict = await checkInHost(services, file, services.files.freshSchema(type));
    if (!verdict.ok) {
      throw new ServiceError(
        "invalid_request",
        `archive entry '${entry}' (${type}) ${verdict.problem}; nothing was imported`,
      );
    }
  }
}

async function checkInHost(
  services: EngineServices,
  file: string,
  schema: ReturnType<EngineServices["files"]["freshSchema"]>,
): Promise<FileCheck> {
  const at: DbLocation = { file, dir: `${file}.d` };
  const allowanceMs = Math.ceil((statSync(file, { throwIfNoEntry: false })?.size ?? 0) / CHECK_BYTES_PER_MS);
  try {
    return await services.sqlHost.request<FileCheck>({ kind: "check", at, schema }, services.namespace, allowanceMs);
  } catch (err) {
    // A check that overran its time or took its host down: the file is not taken either.
    return { ok: false, problem: `could not be checked (${(err as Error).message})` };
  } finally {
    await services.sqlHost.request({ kind: "close", at }).catch(() => undefined); // forgets its lane
  }
}
