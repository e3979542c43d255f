/**
 * Change notices: an engine says that a file or an object changed (a write, move, delete, copy,
 * a signed-URL upload), and whoever listens — MCP sessions subscribed to a resource — hears it.
 * The engine publishes on its `ChangeFeed` (EngineServices.changes); in one process that is a
 * `LocalChanges`, in the cloud a Redis channel per workspace (@prim/db `RedisChanges`), so an
 * MCP process hears the writes of every cell.
 */

/** One changed file (fs) or object (storage) of a workspace. */
export interface ChangeNotice {
  workspace: string;
  /** The primitive's id. */
  primitive: string;
  type: "fs" | "storage";
  /**
   * fs: the canonical path (`/a/b.txt`); storage: the object key; `""` with `subtree`: the
   * whole primitive (a snapshot restored, the primitive deleted).
   */
  path: string;
  /** Everything under `path` changed too (fs: a directory deleted, moved or forked into). */
  subtree?: boolean;
}

export type ChangeListener = (notice: ChangeNotice) => void;

/** Where change notices can be heard: `subscribe` resolves once listening, to the unsubscribe. */
export interface ChangeSource {
  subscribe(workspace: string, listener: ChangeListener): Promise<() => void>;
}

/** Both sides: the engine publishes (never waits, never fails a write), listeners subscribe. */
export interface ChangeFeed extends ChangeSource {
  publish(notice: ChangeNotice): void;
}

/** Whether `notice` concerns `path` of `primitive` (the path itself, or a subtree above it). */
export function noticeCovers(notice: ChangeNotice, primitive: string, path: string): boolean {
  if (notice.primitive !== primitive) return false;
  if (notice.path === path) return true;
  if (notice.subtree !== true) return false;
  if (notice.path === "") return true;
  const prefix = notice.path.endsWith("/") ? notice.path : `${notice.path}/`;
  return path.startsWith(prefix);
}

/**
 * The in-process feed (the local engine, `prim dev`, a cell without Redis): listeners are called
 * on a later microtask, so a listener never runs inside, slows or fails the write that published.
 */
export class LocalChanges implements ChangeFeed {
  private readonly listeners = new Map<string, Set<ChangeListener>>();

  publish(notice: ChangeNotice): void {
    const listeners = this.listeners.get(notice.workspace);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) {
      queueMicrotask(() => {
        try {
          listener(notice);
        } catch {
          // A listener's failure is its own (a session that went away); the write stands.
        }
      });
    }
  }

  async subscribe(workspace: string, listener: ChangeListener): Promise<() => void> {
    let set = this.listeners.get(workspace);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(workspace, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(workspace) === set) this.listeners.delete(workspace);
    };
  }
}
