import type Database from "better-sqlite3";
import type { Clock } from "../core/clock.js";
import type { PrimitiveType } from "../core/types.js";

/**
 * What every primitive type provides over its SQLite file. The engine opens files, keeps them
 * open in an LRU, and hands each operation the type's store; snapshot, fork, export and stats
 * work on the file itself and so stay uniform across types.
 */
export interface PrimitiveDefinition<S = unknown> {
  type: PrimitiveType;
  /** Creates the type's tables (idempotently) and returns its store over the open file. */
  open(db: Database.Database, env: { clock: Clock }): S;
  /** PrimitiveStats `items`, counted as the spec says for the type. */
  items(store: S): number;
  /** Bytes the primitive holds outside its file (blobs), added to `size_bytes`. */
  externalBytes?(store: S): number;
  /** Called when the primitive moves to another group (storage: invalidate signed URLs). */
  onMove?(store: S): void;
  /** Blob hashes the primitive references (kept by blob collection). */
  blobRefs?(store: S): Iterable<string>;
}
