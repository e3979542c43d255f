import type { Durability, PrimitiveType } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../core/clock.js";
import type { VaultEnv } from "../keys/keyring.js";
import type { SqlHost } from "../sql-host/pool.js";
import type { SyncCounters } from "../sqlite/durable-sync.js";
import type { ChangeLog, ChangeLogView } from "./changes/log.js";

/**
 * Turns texts into vectors for recall's optional semantic signal. The engine has none unless
 * one is configured (`Engine.openLocal({ embedder })`); without it nothing leaves the machine.
 */
export interface Embedder {
  /** One vector per text, in order; every vector of one embedder has the same length. */
  embed(texts: string[]): Promise<number[][]>;
}

/** What every type's store may use, handed over by the engine. */
export interface PrimitiveEnv {
  clock: Clock;
  /** The pool of processes that run user SQL for `db` primitives (each started when needed). */
  sqlHost: SqlHost;
  /** Embeddings for memory recall; absent unless configured (nothing calls the network). */
  embedder?: Embedder | undefined;
  /** The vault's key ring and fetch settings; absent, vault primitives cannot be opened. */
  vault?: VaultEnv | undefined;
  /** The engine-wide durability; a primitive's own setting overrides it. */
  durability: Durability;
  /** Where durable writes count their fsyncs (the cell's). */
  syncs: SyncCounters;
}

/** What `open` gets besides the file: where it is, and the change log the store appends to. */
export interface OpenEnv extends PrimitiveEnv {
  path: string;
  dir: string;
  /**
   * The primitive's change log (changes/log.ts), in the same file: a store appends to it inside
   * the transaction that makes each change. Null for a type that keeps its file itself (db).
   */
  changes: ChangeLog | null;
  /** Wakes the primitive's feed readers: for a type that keeps its file itself, once it wrote. */
  changed: () => void;
}

/** A primitive's move to another group (group ids). */
export interface PrimitiveMove {
  fromGroupId: string;
  toGroupId: string;
}

/** What a fork hook learns about the copy it adjusts. */
export interface ForkContext {
  sourceId: string;
  /** Group ids of the source and of the copy (a vault re-encrypts when they differ). */
  fromGroupId: string;
  toGroupId: string;
}

/**
 * What every primitive type provides over its SQLite file. The engine opens files, keeps them
 * open in an LRU, and hands each operation the type's store; snapshot, fork, export and stats
 * work on the file itself and so stay uniform across types.
 */
export interface PrimitiveDefinition<S = unknown> {
  type: PrimitiveType;
  /**
   * True when the type keeps its file itself (the `db` type's file is the user's database,
   * opened only by the SQL host); the engine then opens no connection and passes `db` null.
   */
  ownsFile?: boolean;
  /** Creates the type's tables (idempotently) and returns its store over the open file. */
  open(db: Database.Database, env: OpenEnv): S;
  /**
   * For a type that keeps its file itself: what a durable call waits for (the fsync covering
   * what it wrote), or undefined when nothing is unsynced. Other types' files are synced by the
   * engine's connection.
   */
  synced?(store: S): Promise<unknown> | undefined;
  /** Called when the engine closes the primitive (LRU eviction, delete, shutdown). */
  close?(store: S): void | Promise<void>;
  /** PrimitiveStats `items`, counted as the spec says for the type. */
  items(store: S): number | Promise<number>;
  /** Bytes the primitive holds outside its file (blobs), added to `size_bytes`. */
  externalBytes?(store: S): number;
  /** Called when the primitive moves to another group (storage: invalidate signed URLs; vault: re-encrypt). */
  onMove?(store: S, move: PrimitiveMove): void;
  /** Blob hashes the primitive references (kept by blob collection). */
  blobRefs?(store: S): Iterable<string>;
  /**
   * A consistent copy of the primitive's file at `dest` while writers continue (snapshots,
   * forks). Default: SQLite's backup API on the engine's connection.
   */
  backup?(store: S, dest: string): Promise<unknown>;
  /**
   * Makes the primitive's data exactly the copy at `src` (restore). Default: the engine closes
   * the file and puts the copy in its place.
   */
  restore?(store: S, src: string): Promise<unknown>;
  /** What the type keeps across a restore, read before it (storage: the signing epoch in force). */
  beforeRestore?(store: S): unknown;
  /** Adjusts the restored file with what `beforeRestore` kept (storage: revokes every signed URL). */
  onRestore?(store: S, kept: unknown): void;
  /**
   * Group archives (archive/): makes a copy of the file fit to leave this engine — whatever only
   * this engine's keys can read is re-sealed under `archiveKey` (vault values), or left out when
   * there is none (an export without vault values). Types without such data need nothing.
   */
  toArchive?(path: string, env: PrimitiveEnv, archiveKey: Buffer | null): void;
  /** The reverse, on an archived copy about to become primitive `target.id` in `target.groupId`. */
  fromArchive?(
    path: string,
    env: PrimitiveEnv,
    archiveKey: Buffer | null,
    target: { id: string; groupId: string },
  ): void;
  /**
   * Brings the change log up to date before a feed is read (kv: removes the keys whose expiry
   * passed, so their `expire` entries show now rather than at the next write's sweep).
   */
  beforeChangesRead?(store: S): Promise<void> | void;
  /** The change log of a type that keeps its file itself (db: appended by the SQL host). */
  changeLog?(store: S): Promise<ChangeLogView> | ChangeLogView;
  /** Adjusts a fresh copy made by a fork (queue: release leases; storage: new signing epoch). */
  onFork?(store: S, fork: ForkContext): void | Promise<void>;
}
