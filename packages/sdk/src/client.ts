import type { GroupInfo, Manifest, Page, PrimitiveInfo, PrimitiveStats, PrimitiveType } from "@prim/wire";
import { KvClient } from "./kv.js";
import { StorageClient } from "./storage.js";
import { type ClientOptions, Transport } from "./transport.js";

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

/** Typed client for the Prim REST API (cloud or local engine). */
export class PrimClient {
  readonly transport: Transport;

  constructor(options: ClientOptions = {}) {
    this.transport = new Transport(options);
  }

  health(): Promise<{ ok: true; version: string }> {
    return this.transport.request("GET", "/health");
  }

  readonly groups = {
    create: (name: string): Promise<GroupInfo> => this.transport.request("POST", "/v1/groups", { body: { name } }),
    list: (page: PageOptions = {}): Promise<Page<Manifest>> =>
      this.transport.request("GET", "/v1/groups", { query: { ...page } }),
    get: (group: string): Promise<GroupInfo> =>
      this.transport.request("GET", `/v1/groups/${encodeURIComponent(group)}`),
    delete: (group: string, options: { force?: boolean } = {}): Promise<void> =>
      this.transport.request("DELETE", `/v1/groups/${encodeURIComponent(group)}`, {
        query: { force: options.force },
      }),
  };

  readonly primitives = {
    create: (input: { name: string; type: PrimitiveType; group: string }): Promise<PrimitiveInfo> =>
      this.transport.request("POST", "/v1/primitives", { body: input }),
    list: (filter: { type?: PrimitiveType; group?: string } & PageOptions = {}): Promise<Page<PrimitiveInfo>> =>
      this.transport.request("GET", "/v1/primitives", { query: { ...filter } }),
    get: (id: string): Promise<PrimitiveInfo> =>
      this.transport.request("GET", `/v1/primitives/${encodeURIComponent(id)}`),
    update: (id: string, patch: { name?: string; group?: string }): Promise<PrimitiveInfo> =>
      this.transport.request("PATCH", `/v1/primitives/${encodeURIComponent(id)}`, { body: patch }),
    delete: (id: string): Promise<void> => this.transport.request("DELETE", `/v1/primitives/${encodeURIComponent(id)}`),
    stats: (id: string): Promise<PrimitiveStats> =>
      this.transport.request("GET", `/v1/primitives/${encodeURIComponent(id)}/stats`),
  };

  /** The kv routes of primitive `id`. */
  kv(id: string): KvClient {
    return new KvClient(this.transport, id);
  }

  /** The storage routes of primitive `id`. */
  storage(id: string): StorageClient {
    return new StorageClient(this.transport, id);
  }
}
