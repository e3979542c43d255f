import type { ChangeFeed, ChangeListener, ChangeNotice } from "@prim/wire";
import type { Redis } from "ioredis";
import { pubSubPair } from "./pub-sub.js";

/** The Redis channel of a workspace's change notices (CLOUD.md): one JSON `ChangeNotice` a message. */
export const changesChannel = (workspace: string) => `prim:changes:${workspace}`;

/**
 * Change notices across processes: a cell's engines publish on `prim:changes:<workspace>`
 * (fire and forget: a notice lost while Redis is away never fails the write), and a process
 * serving MCP sessions subscribes to the workspaces its sessions watch, one Redis subscription
 * per workspace however many listeners. Every message comes back through Redis, this process's
 * own included, so a listener hears each notice once.
 */
export class RedisChanges implements ChangeFeed {
  private readonly subscriber: Redis;
  private readonly publisher: Redis;
  private readonly listeners = new Map<string, Set<ChangeListener>>();
  /** The SUBSCRIBE in flight or done per workspace (listeners wait for it). */
  private readonly subscribed = new Map<string, Promise<unknown>>();

  constructor(redisUrl: string) {
    ({ subscriber: this.subscriber, publisher: this.publisher } = pubSubPair(redisUrl));
    this.subscriber.on("message", (channel: string, message: string) => this.deliver(channel, message));
  }

  publish(notice: ChangeNotice): void {
    // Issued synchronously, so notices go out in the order they were published (while the
    // connection comes up, ioredis queues them in order).
    if (this.publisher.status === "wait") this.publisher.connect().catch(() => {});
    this.publisher.publish(changesChannel(notice.workspace), JSON.stringify(notice)).catch(() => {});
  }

  async subscribe(workspace: string, listener: ChangeListener): Promise<() => void> {
    let set = this.listeners.get(workspace);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(workspace, set);
    }
    set.add(listener);
    let pending = this.subscribed.get(workspace);
    if (pending === undefined) {
      pending = (async () => {
        if (this.subscriber.status === "wait") await this.subscriber.connect();
        await this.subscriber.subscribe(changesChannel(workspace));
      })();
      this.subscribed.set(workspace, pending);
      pending.catch(() => this.subscribed.delete(workspace));
    }
    try {
      await pending;
    } catch (err) {
      set.delete(listener);
      throw err;
    }
    const listening = set;
    return () => {
      listening.delete(listener);
      if (listening.size > 0 || this.listeners.get(workspace) !== listening) return;
      this.listeners.delete(workspace);
      this.subscribed.delete(workspace);
      this.subscriber.unsubscribe(changesChannel(workspace)).catch(() => {});
    };
  }

  private deliver(channel: string, message: string): void {
    const workspace = channel.startsWith("prim:changes:") ? channel.slice("prim:changes:".length) : undefined;
    const listeners = workspace === undefined ? undefined : this.listeners.get(workspace);
    if (listeners === undefined) return;
    let notice: ChangeNotice;
    try {
      notice = JSON.parse(message) as ChangeNotice;
    } catch {
      return;
    }
    if (notice.workspace !== workspace) return;
    for (const listener of [...listeners]) {
      try {
        listener(notice);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.subscribed.clear();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
