import { type FileHandle, open } from "node:fs/promises";
import { dirname } from "node:path";
import type Database from "better-sqlite3";

/**
 * What the engine's durable writes cost since it started: `fsyncs` rounds, and `writes` calls
 * answered only after one (writes per fsync = writes / fsyncs). Shared by a cell's syncers.
 */
export class SyncCounters {
  fsyncs = 0;
  writes = 0;
}

interface Waiters {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function waiters(): Waiters {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Group fsync of one SQLite file. Commits run with synchronous=NORMAL (a WAL append, no
 * fsync); a `durable` write then waits on `barrier()`, which resolves once an fsync of the
 * write-ahead log that *started after the call* has returned — so what the caller committed
 * before calling is on stable storage. One fsync runs at a time, off the event loop (libuv's
 * file threads); every caller that arrives while it runs shares the next one, so N concurrent
 * writers cost about one fsync per round, not N.
 *
 * Why the WAL alone is enough: WAL frames carry checksums chained from the header, so after a
 * power cut SQLite replays exactly the complete commits that reached the disk; everything
 * before the last checkpoint is already in the database file, which SQLite itself fsyncs at
 * each checkpoint under synchronous=NORMAL. A WAL file (or the database file) that is new since
 * the last round also has its directory fsynced, so its name survives too.
 */
export class WalSync {
  private running = false;
  private next: Waiters | null = null;
  private fd: FileHandle | null = null;
  private syncedIno = -1;
  private dirSynced = false;
  private closed = false;

  /**
   * `path` is the database file. `keepOpen`: hold the WAL's descriptor between rounds — right
   * for a connection that holds its file exclusively (SQLite removes the WAL only on close);
   * files another process opens and closes (the SQL host's) are reopened each round.
   */
  constructor(
    private readonly path: string,
    private readonly counters: SyncCounters,
    private readonly keepOpen: boolean,
  ) {}

  /** Resolves once everything committed to the file before this call is on stable storage. */
  barrier(): Promise<void> {
    this.next ??= waiters();
    const { promise } = this.next;
    if (!this.running) void this.loop();
    return promise;
  }

  /** Stops holding the WAL's descriptor (the connection is closing; SQLite checkpoints it). */
  close(): void {
    this.closed = true;
    if (this.fd !== null && !this.running) {
      void this.fd.close().catch(() => undefined);
      this.fd = null;
    }
  }

  private async loop(): Promise<void> {
    this.running = true;
    while (this.next !== null) {
      const round = this.next;
      this.next = null;
      try {
        await this.syncOnce();
        this.counters.fsyncs++;
        round.resolve();
      } catch (err) {
        round.reject(err);
      }
    }
    this.running = false;
    if (this.closed) this.close();
  }

  private async syncOnce(): Promise<void> {
    let fd = this.fd;
    if (fd === null) {
      try {
        fd = await open(`${this.path}-wal`, "r");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        // No WAL: the last connection checkpointed (SQLite fsyncs the database when it does)
        // and removed it, or the file was written without one (a backup's copy) — or it was
        // never made (a request that failed before writing anything).
        await this.syncDatabase().catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
        return;
      }
    }
    try {
      // A descriptor held open keeps its inode: only a reopened one can be a new WAL file.
      const ino = fd === this.fd ? this.syncedIno : (await fd.stat()).ino;
      await fd.datasync();
      if (ino !== this.syncedIno) {
        // A new WAL file: the database file's first pages must be durable too (SQLite drops a
        // WAL beside an empty database file), and both names in their directory.
        await fsyncPath(this.path);
        await fsyncPath(dirname(this.path));
        this.dirSynced = true;
        this.syncedIno = ino;
      }
    } finally {
      if (this.keepOpen && !this.closed) this.fd = fd;
      else {
        this.fd = null;
        await fd.close();
      }
    }
  }

  /** The database file, and its directory the first time. */
  private async syncDatabase(): Promise<void> {
    await fsyncPath(this.path);
    if (!this.dirSynced) {
      this.dirSynced = true;
      await fsyncPath(dirname(this.path));
    }
  }
}

/**
 * The fsync round that covers the latest write to one file: a call answered after a write
 * waits on `covered()`, which is undefined once everything written is on stable storage.
 * Every caller that observed a write must wait, not only the first: two calls finishing in
 * the same turn may both have written, and the one that noticed the change first does not
 * make the other's answer safe before the round returns.
 */
export class Coverage {
  private pending: Promise<void> | undefined;

  constructor(private readonly sync: WalSync) {}

  /** Something was committed: the next round (started after this call) covers it. */
  wrote(): void {
    const round = this.sync.barrier();
    this.pending = round;
    const settle = () => {
      if (this.pending === round) this.pending = undefined;
    };
    round.then(settle, settle);
  }

  covered(): Promise<void> | undefined {
    return this.pending;
  }

  close(): void {
    this.sync.close();
  }
}

/**
 * Durability for an engine connection (a primitive's or the catalog's file): `total_changes()`
 * counts the rows the connection changed, so a call that wrote nothing new waits only for a
 * round still covering earlier writes.
 */
export class ConnectionSync {
  private readonly coverage: Coverage;
  private readonly changes: Database.Statement;
  /** -1: a connection's first call assumes it wrote (the file may have been written before). */
  private seen = -1;

  constructor(db: Database.Database, path: string, counters: SyncCounters) {
    this.coverage = new Coverage(new WalSync(path, counters, true));
    this.changes = db.prepare("SELECT total_changes()").pluck();
  }

  /** What a call must wait for before its answer, or undefined when nothing is unsynced. */
  covered(): Promise<void> | undefined {
    const now = this.changes.get() as number;
    if (now !== this.seen) {
      this.seen = now;
      this.coverage.wrote();
    }
    return this.coverage.covered();
  }

  close(): void {
    this.coverage.close();
  }
}

/** fsyncs one file or directory. */
export async function fsyncPath(path: string): Promise<void> {
  const file = await open(path, "r");
  try {
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * Puts whole files on stable storage: each file, then each directory that names them (a copy's
 * bytes and its name). For files written outside a commit — snapshot copies, a fork's or a
 * restore's copy, a blob.
 */
export async function syncFiles(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map(fsyncPath));
  await Promise.all([...new Set(paths.map((p) => dirname(p)))].map(fsyncPath));
}
