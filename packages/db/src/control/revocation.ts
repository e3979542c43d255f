import type { Redis } from "ioredis";
import { pubSubPair } from "./pub-sub.js";
import { counterMonth, type UsageMonth } from "./usage.js";

/** The Redis channel every process listens on for revoked credentials (CLOUD.md). */
export const REVOKED_CHANNEL = "prim:revoked";

/** A message on `REVOKED_CHANNEL` naming a workspace whose plan changed (`plan:<ws>`). */
export const PLAN_CHANGED_PREFIX = "plan:";

/** Where the limiter keeps a workspace's plan in Redis (under the workspace's hash tag). */
export const planCacheKey = (workspace: string) => `prim:{${workspace}}:plan`;

/** The limiter's operation counters: this prefix plus `YYYYMM` (month) or `YYYYMMDD` (day), UTC. */
export const operationsKeyPrefix = (workspace: string) => `prim:{${workspace}}:ops:`;

/**
 * Revocation fan-out: `publish(hash)` tells every process (this one included) to drop a key
 * from its cache; `listen(onRevoked)` subscribes. A message is a key's sha256 hash.
 */
export class Revocations {
  private readonly subscriber: Redis;
  private readonly publisher: Redis;

  constructor(redisUrl: string) {
    ({ subscriber: this.subscriber, publisher: this.publisher } = pubSubPair(redisUrl));
  }

  async listen(onRevoked: (hash: string) => void): Promise<void> {
    await this.subscriber.connect();
    this.subscriber.on("message", (channel: string, message: string) => {
      if (channel === REVOKED_CHANNEL) onRevoked(message);
    });
    await this.subscriber.subscribe(REVOKED_CHANNEL);
  }

  async publish(hash: string): Promise<void> {
    if (this.publisher.status === "wait") await this.publisher.connect();
    await this.publisher.publish(REVOKED_CHANNEL, hash);
  }

  /** The live operation count of a UTC month, or null when Redis does not answer. */
  async operations(workspace: string, month: UsageMonth): Promise<number | null> {
    const key = operationsKeyPrefix(workspace) + counterMonth(month);
    try {
      if (this.publisher.status === "wait") await this.publisher.connect();
      return Number((await this.publisher.get(key)) ?? 0);
    } catch {
      return null;
    }
  }

  /**
   * Drops a workspace's plan from Redis and tells every process (`plan:<ws>` on the revocation
   * channel) to drop the copy it holds, so the next limited call reads the new one.
   */
  async planChanged(workspace: string): Promise<void> {
    if (this.publisher.status === "wait") await this.publisher.connect();
    await this.publisher.del(planCacheKey(workspace));
    await this.publisher.publish(REVOKED_CHANNEL, PLAN_CHANGED_PREFIX + workspace);
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
