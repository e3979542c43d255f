import type { FsEntry, FsForkResult, OperationResult, SearchHit } from "@prim/wire";
import { PrimitiveClient } from "./primitive-client.js";
import { encodePath, type RawBody } from "./transport.js";

/** A directory listing: `truncated` when it held more entries than one answer carries. */
export interface FsListing {
  data: FsEntry[];
  truncated: boolean;
}

/** `/a/b` and `a/b` name the same file; the path is sent segment by segment. */
function filePath(path: string): string {
  const relative = path.replace(/^\/+/, "");
  return relative === "" ? "files" : `files/${encodePath(relative)}`;
}

/** The fs routes of one primitive: files and directories. */
export class FsClient extends PrimitiveClient {
  /** The raw response of a file: `body` streams its bytes; headers carry ETag and mode. */
  read(path: string, options: { signal?: AbortSignal } = {}): Promise<Response> {
    return this.transport.send("GET", `${this.base}/${filePath(path)}`, { signal: options.signal });
  }

  async text(path: string): Promise<string> {
    return (await this.read(path)).text();
  }

  async bytes(path: string): Promise<Uint8Array> {
    return new Uint8Array(await (await this.read(path)).arrayBuffer());
  }

  /** A file's or directory's entry. */
  stat(path: string): Promise<FsEntry> {
    return this.transport.request("GET", `${this.base}/${filePath(path)}`, { query: { stat: 1 } });
  }

  /** A directory's entries (the root without a path); `recursive` lists the whole subtree. */
  list(path = "/", options: { recursive?: boolean } = {}): Promise<FsListing> {
    return this.transport.request("GET", `${this.base}/${filePath(path)}`, {
      query: { list: 1, recursive: options.recursive ? 1 : undefined },
    });
  }

  /** Writes a file (parents are created); `body` may be a stream. `mode` is octal, e.g. `600`. */
  async write(path: string, body: RawBody, options: { mode?: string; signal?: AbortSignal } = {}): Promise<FsEntry> {
    const headers: Record<string, string> = { "content-type": "application/octet-stream" };
    if (options.mode !== undefined) headers["x-service-mode"] = options.mode;
    const res = await this.transport.send("PUT", `${this.base}/${filePath(path)}`, {
      headers,
      body,
      signal: options.signal,
    });
    return (await res.json()) as FsEntry;
  }

  /** Deletes a file or an empty directory; `recursive` for a non-empty one. */
  async delete(path: string, options: { recursive?: boolean } = {}): Promise<void> {
    await this.transport.send("DELETE", `${this.base}/${filePath(path)}`, {
      query: { recursive: options.recursive ? 1 : undefined },
    });
  }

  move(from: string, to: string, options: { overwrite?: boolean } = {}): Promise<FsEntry> {
    return this.transport.request("POST", `${this.base}/move`, { body: { from, to, overwrite: options.overwrite } });
  }

  mkdir(path: string): Promise<FsEntry> {
    return this.transport.request("POST", `${this.base}/mkdir`, { body: { path } });
  }

  /** Paths matching a glob (`src/**\/*.ts`). */
  async glob(pattern: string, options: { limit?: number } = {}): Promise<string[]> {
    const answer = await this.transport.request<OperationResult<"fs.glob">>("GET", `${this.base}/glob`, {
      query: { pattern, limit: options.limit },
    });
    return answer.data;
  }

  /** Full-text search over file contents (under `path`). */
  async search(q: string, options: { path?: string; limit?: number } = {}): Promise<SearchHit[]> {
    const answer = await this.transport.request<OperationResult<"fs.search">>("GET", `${this.base}/search`, {
      query: { q, path: options.path, limit: options.limit },
    });
    return answer.data;
  }

  /** Copies a directory (large files are shared, not copied) to `to` or a new sibling. */
  fork(from: string, to?: string): Promise<FsForkResult> {
    return this.transport.request("POST", `${this.base}/forks`, { body: { from, to } });
  }
}
