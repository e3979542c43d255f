import type { MemoryRecord } from "@prim/wire";
import { ITEM_OVERHEAD_BYTES } from "../../core/response-budget.js";

export type { MemoryRecord };
// The memory record: its row in the primitive's file and its API shape.

export interface MemoryRow {
  seq: number;
  id: string;
  kind: string;
  text: string;
  tags: string;
  owner: string | null;
  metadata: string;
  created_at: number;
  updated_at: number;
  superseded_by: string | null;
  supersedes: string;
  version: number;
}

// Every column but the vector: rows are read often, vectors only by recall's vector signal.
export const ROW_COLUMNS =
  "seq, id, kind, text, tags, owner, metadata, created_at, updated_at, superseded_by, supersedes, version";

/** A memory's bytes in a JSON answer (text measured as JSON, so escapes count). */
export function answerBytes(row: Pick<MemoryRow, "text" | "metadata" | "tags" | "supersedes" | "owner">): number {
  return (
    ITEM_OVERHEAD_BYTES +
    JSON.stringify(row.text).length +
    row.metadata.length +
    row.tags.length +
    row.supersedes.length +
    (row.owner?.length ?? 0)
  );
}

export function toRecord(row: Omit<MemoryRow, "seq"> & { seq?: number }): MemoryRecord {
  return {
    id: row.id,
    kind: row.kind,
    text: row.text,
    tags: JSON.parse(row.tags) as string[],
    owner: row.owner,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    created_at: row.created_at,
    updated_at: row.updated_at,
    superseded_by: row.superseded_by,
    supersedes: JSON.parse(row.supersedes) as string[],
    version: row.version,
  };
}
