import { request } from "node:http";
import { LOCAL_PRINCIPAL, type PrimitiveInfo, type Principal } from "@prim/engine";
import { startServer, type TestServer, type TestServerOptions } from "@prim/testkit/rest";
import { type BytesResponse, fetchBytes, keyPath, type RawResponse } from "./storage-helpers.js";

export const ENTRY_FIELDS = ["etag", "mode", "mtime", "name", "path", "size", "type"];

export interface FsServer extends TestServer {
  fs: PrimitiveInfo;
  base: string;
  /** PUT raw bytes to `/files/{path}` (each segment URL-encoded). */
  put(path: string, body: string | Buffer, headers?: Record<string, string>): Promise<BytesResponse>;
  /** GET (or HEAD) `/files/{path}` plus a query string, as bytes. */
  get(path: string, query?: string, method?: string): Promise<BytesResponse>;
  /** A request with the literal path after `/files/` (no client-side normalisation of `..`). */
  raw(
    method: string,
    rest: string,
    body?: Buffer,
    headers?: Record<string, string | number>,
  ): Promise<RawResponse & { json: any }>;
}

/**
 * A request whose path goes out exactly as written: `fetch` and `http.request(url)` parse the
 * URL and resolve `..` and `%2e%2e` before sending. Answers once the response has ended; a
 * body shorter than a declared `content-length` is left unfinished and the socket destroyed.
 */
export function literalRequest(
  origin: string,
  path: string,
  method: string,
  headers: Record<string, string | number> = {},
  body?: Buffer,
): Promise<RawResponse & { json: any }> {
  const { hostname, port } = new URL(origin);
  const declared = { ...(body === undefined ? {} : { "content-length": body.length }), ...headers };
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method, headers: declared, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        req.destroy();
        const bytes = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = JSON.parse(bytes.toString("utf8"));
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes, json });
      });
    });
    req.on("error", reject);
    if (body === undefined) req.end();
    else if (Number(declared["content-length"]) > body.length) req.write(body);
    else req.end(body);
  });
}

/** Attaches the fs helpers to a server and primitive (also after a restart on the same dataDir). */
export function fsOn(server: TestServer, fs: PrimitiveInfo, credential?: Record<string, string>): FsServer {
  const headers = credential ?? server.auth;
  const base = `/v1/primitives/${fs.id}`;
  const files = `${server.url}${base}/files`;
  return {
    ...server,
    fs,
    base,
    put: (path, body, extra = {}) =>
      fetchBytes(`${files}/${keyPath(path)}`, {
        method: "PUT",
        body,
        headers: { "content-type": "application/octet-stream", ...headers, ...extra },
      }),
    get: (path, query = "", method = "GET") =>
      fetchBytes(`${files}${path === "" ? "" : `/${keyPath(path)}`}${query}`, { method, headers }),
    raw: (method, rest, body, extra = {}) =>
      literalRequest(server.url, `${base}/files/${rest}`, method, { ...headers, ...extra }, body),
  };
}

export async function createFs(server: TestServer, name = "work", group = "app"): Promise<PrimitiveInfo> {
  const groups = await server.engine.invoke<{ data: { name: string }[] }>(LOCAL_PRINCIPAL, "group.list", null, {});
  if (!groups.data.some((g) => g.name === group)) {
    await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: group });
  }
  return server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, { name, type: "fs", group });
}

/** A server with group `app` and an fs primitive `work` in it. */
export async function withFs(options: TestServerOptions = {}): Promise<FsServer> {
  const server = await startServer(options);
  return fsOn(server, await createFs(server));
}

/**
 * A server whose requests carrying `Authorization: Bearer scoped` run as a key of group `app`
 * with the tools set by `as(...)`; other requests run as the local account.
 */
export async function withScopedFs() {
  let scoped: Principal = LOCAL_PRINCIPAL;
  const server = await withFs({
    authenticate: (req) => (req.headers.authorization === "Bearer scoped" ? scoped : LOCAL_PRINCIPAL),
  });
  const group = (await server.api("GET", "/v1/groups/app")).body;
  /** Sets the key's tools (and optionally binds it to another group id). */
  const as = (tools: string[] | null, groupId: string = group.id) => {
    scoped = { kind: "scoped", workspace: "local", actor: "key:key_fs", groupId, tools };
  };
  const key = fsOn(server, server.fs, { authorization: "Bearer scoped" });
  const call = (method: string, path: string, body?: unknown) =>
    server.api(method, path, body, { authorization: "Bearer scoped" });
  return { ...server, as, key, call };
}

/** The paths of a listing response. */
export const paths = (res: { json?: any; body?: any }) =>
  ((res.json ?? res.body).data as { path: string }[]).map((e) => e.path);
