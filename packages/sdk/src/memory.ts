import type { ConsolidateResult, MemoryRecord, OperationResult, Page, RecalledMemory } from "@prim/wire";
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
}

/** The memory routes of one primitive: an agent's memories, with recall. */
export class MemoryClient extends PrimitiveClient {
  remember(memory: NewMemory): Promise<MemoryRecord> {
    return this.transport.request("POST", `${this.base}/memories`, { body: memory });
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
    const { includeSuperseded, ...rest } = options;
    const answer = await this.transport.request<OperationResult<"memory.recall">>("POST", `${this.base}/recall`, {
      body: { query, ...rest, include_superseded: includeSuperseded },
    });
    return answer.data;
  }

  /** Merges near-duplicates (similarity ≥ `threshold`, default 0.8) into their newest member. */
  consolidate(options: { threshold?: number } = {}): Promise<ConsolidateResult> {
    return this.transport.request("POST", `${this.base}/consolidate`, { body: { threshold: options.threshold } });
  }
}
