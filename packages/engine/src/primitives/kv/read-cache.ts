import type { KvEntry } from "@prim/wire";
import { RAW_JSON, type WithRawJson } from "../../core/raw-json.js";

/** Entries bigger than this are not cached; they would crowd out many small hot keys. */
const MAX_CACHED_VALUE_BYTES = 64 * 1024;

type CachedEntry = Readonly<KvEntry> & WithRawJson;

/**
 * KvEntry's JSON text, put together around the value's stored JSON text so the value is not
 * serialised again (same field order as the object).
 */
export function withJson<E extends KvEntry>(entry: E, valueJson: string): E & WithRawJson {
  const json = `{"key":${JSON.stringify(entry.key)},"encoding":"${entry.encoding}","version":${entry.version},"expires_at":${entry.expires_at},"created_at":${entry.created_at},"updated_at":${entry.updated_at},"value":${valueJson}}`;
  return Object.assign(entry, { [RAW_JSON]: json });
}

/**
 * Recently read entries of one kv store, with their JSON text, in LRU order. The engine is
 * the only writer of the store's file (the data directory is locked), so the cache stays
 * coherent by dropping a key on every write; a read fills it.
 */
export class ReadCache {
  private readonly entries = new Map<string, { entry: CachedEntry; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 4096,
    private readonly maxBytes = 8 * 1024 * 1024,
  ) {}

  /** A live cached entry; an expired one is dropped. */
  get(key: string, now: number): CachedEntry | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    const expiresAt = hit.entry.expires_at;
    if (expiresAt !== null && expiresAt <= now) {
      this.delete(key);
      return undefined;
    }
    // Refresh the LRU position (Map order is insertion order).
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.entry;
  }

  /** Caches an entry read from the store and returns it with its JSON text attached. */
  fill(entry: KvEntry, valueJson: string): CachedEntry {
    const valueBytes = valueJson.length;
    const cached = Object.freeze(withJson(entry, valueJson));
    if (valueBytes > MAX_CACHED_VALUE_BYTES) return cached;
    this.delete(entry.key);
    const bytes = valueBytes + entry.key.length + 128;
    this.entries.set(entry.key, { entry: cached, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next().value as string;
      this.delete(oldest);
    }
    return cached;
  }

  delete(key: string): void {
    const hit = this.entries.get(key);
    if (hit === undefined) return;
    this.entries.delete(key);
    this.bytes -= hit.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
