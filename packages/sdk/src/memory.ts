import type { ConsolidateResult, MemoryRecord, MemoryVersion, OperationResult, Page, RecalledMemory } from "@prim/wire";
import { everyItem, type PageOptions } from "./pages.js";
import { PrimitiveClient, seg } from "./primitive-client.js";

export interface NewMemory {
  kind: string;
  text: string;
  tags?: string[];
  owner?: string;
  metadata?: Record<string, unknown>;
}

export interface MemoryFilter {
  kind?: string;
  tag?: string;
  owner?: string;
}

export interface RecallOptions {
  kinds?: string[];
  tags?: string[];
  owner?: string;
  /** At most this many (1..100, default 10). */
  limit?: number;
  includeSuperseded?: boolean;
  /** Only memories created at or after / at or before this time (ms since the epoch). */
  since?: number;
  until?: number;
  /** The memories as they were at this time (ms since the epoch). */
  asOf?: number;
  /** Leave out results scoring below this (0..1). */
  minScore?: number;
}

/** What `update` changes: kind and text are required; tags, owner and metadata left out stay. */
export type MemoryChange = NewMemory & {
  /** Change it only if it is at this version (else a 412 `precondition_failed` error). */
  ifVersion?: number;
};

/** The memory routes of one primitive: an agent's memories, with recall. */
export class MemoryClient extends PrimitiveClient {
  remember(memory: NewMemory): Promise<MemoryRecord> {
    return this.transport.request("POST", `${this.base}/memories`, { body: memory });
  }

  /** Changes memory `id` in place (a new version); see MemoryChange. */
  update(id: string, change: MemoryChange): Promise<MemoryRecord> {
    const { ifVersion, ...memory } = change;
    return this.transport.request("POST", `${this.base}/memories`, {
      body: { ...memory, id, if_version: ifVersion },
    });
  }

  /** A page of memory `id`'s history, newest first: the memory after each change. */
  history(id: string, options: PageOptions = {}): Promise<Page<MemoryVersion>> {
    return this.transport.request("GET", `${this.base}/memories/${seg(id)}/history`, { query: { ...options } });
  }

  /** A page of memories, newest first. */
  list(options: MemoryFilter & PageOptions = {}): Promise<Page<MemoryRecord>> {
    return this.transport.request("GET", `${this.base}/memories`, { query: { ...options } });
  }

  iterate(filter: MemoryFilter & { limit?: number } = {}): AsyncGenerator<MemoryRecord> {
    return everyItem((cursor) => this.list({ ...filter, cursor }));
  }

  get(id: string): Promise<MemoryRecord> {
    return this.transport.request("GET", `${this.base}/memories/${seg(id)}`);
  }

  forget(id: string): Promise<OperationResult<"memory.forget">> {
    return this.transport.request("DELETE", `${this.base}/memories/${seg(id)}`);
  }

  /** A new memory that replaces `id` (which stays, with `superseded_by` set). */
  supersede(id: string, memory: Partial<Omit<NewMemory, "owner">> & { text: string }): Promise<MemoryRecord> {
    return this.transport.request("POST", `${this.base}/memories/${seg(id)}/supersede`, { body: memory });
  }

  /** The memories that best match `query`, best first, each with its `score`. */
  async recall(query: string, options: RecallOptions = {}): Promise<RecalledMemory[]> {
    const { includeSuperseded, asOf, minScore, ...rest } = options;
    const answer = await this.transport.request<OperationResult<"memory.recall">>("POST", `${this.base}/recall`, {
      body: { query, ...rest, include_superseded: includeSuperseded, as_of: asOf, min_score: minScore },
    });
    return answer.data;
  }

  /** Merges near-duplicates (similarity ≥ `threshold`, default 0.8) into their newest member. */
  consolidate(options: { threshold?: number } = {}): Promise<ConsolidateResult> {
    return this.transport.request("POST", `${this.base}/consolidate`, { body: { threshold: options.threshold } });
  }
}
