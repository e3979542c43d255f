import { Redis } from "ioredis";

/**
 * The two Redis connections of a pub/sub fan-out (a subscribed connection can do nothing else):
 * connected on first use, a command waiting at most two retries. Reconnection is ioredis's job
 * (it resubscribes); an error event must not crash the process.
 */
export function pubSubPair(redisUrl: string): { subscriber: Redis; publisher: Redis } {
  const options = { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true };
  const subscriber = new Redis(redisUrl, options);
  const publisher = new Redis(redisUrl, options);
  subscriber.on("error", () => {});
  publisher.on("error", () => {});
  return { subscriber, publisher };
}
