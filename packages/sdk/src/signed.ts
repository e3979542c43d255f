import type { ObjectInfo } from "@prim/wire";
import type { GetObjectOptions } from "./storage.js";
import type { RawBody, Transport } from "./transport.js";

/** Requests through signed URLs (from `storage(id).presign`): the URL is the credential. */
export class SignedUrls {
  constructor(private readonly transport: Transport) {}

  /** Downloads: the raw response (Range and If-None-Match work as on the object route). */
  get(url: string, options: GetObjectOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (options.range !== undefined) headers.range = options.range;
    if (options.ifNoneMatch !== undefined) headers["if-none-match"] = options.ifNoneMatch;
    return this.transport.sendTo(url, "GET", { headers, signal: options.signal });
  }

  /** Uploads; `headers` are the ones presign returned (they are part of the signature). */
  async put(url: string, body: RawBody, headers: Record<string, string> = {}): Promise<ObjectInfo> {
    const res = await this.transport.sendTo(url, "PUT", { headers, body });
    return (await res.json()) as ObjectInfo;
  }
}
