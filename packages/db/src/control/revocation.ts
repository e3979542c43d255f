import { Redis } from "ioredis";

/** The Redis channel every process listens on for revoked credentials (CLOUD.md). */
export const REVOKED_CHANNEL = "prim:revoked";

/**
 * Revocation fan-out: `publish(hash)` tells every process (this one included) to drop a key
 * from its cache; `listen(onRevoked)` subscribes. A message is a key's sha256 hash.
 */
export class Revocations {
  private readonly subscriber: Redis;
  private readonly publisher: Redis;

  constructor(redisUrl: string) {
    const options = { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true };
    this.subscriber = new Redis(redisUrl, options);
    this.publisher = new Redis(redisUrl, options);
    // Reconnection is ioredis's job; an error event must not crash the process.
    this.subscriber.on("error", () => {});
    this.publisher.on("error", () => {});
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

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
