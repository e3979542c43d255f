import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Engine,
  LOCAL_PRINCIPAL,
  type LocalEngineOptions,
  ManualClock,
  type PrimitiveInfo,
  type Principal,
} from "@prim/engine";
import { createLocalServer, createServer, engineDoor } from "@prim/http";
import type { FastifyRequest } from "fastify";
import { afterEach } from "vitest";
import { assertConformant, checkResponses } from "./conformance.js";
import { sharedHost, startedHost } from "./local-host.js";

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  assertConformant();
});

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestServer {
  url: string;
  engine: Engine;
  clock: ManualClock;
  dataDir: string;
  /**
   * Where the cell keeps what its tenants share (`master.key`, `keys.sqlite`, `signing.key`)
   * when that is not `dataDir`: a test's server on the file's shared host (local-host.ts).
   */
  cellDir?: string;
  /** The workspace it serves (`local` for the local engine): groups' `namespace`. */
  workspace: string;
  /** The credential's headers (`authorization` with the root token or key; none for tokenless). */
  auth: Record<string, string>;
  /** JSON request over real HTTP; `body` is JSON-encoded unless it is a string. */
  api<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  rootToken?: string;
  /** Replaces local auth: maps a request to a principal (tests of scoped credentials). */
  authenticate?: (req: FastifyRequest) => Principal;
  dataDir?: string;
  clock?: ManualClock;
  /** Further engine options (e.g. the vault's test-only `allowLoopbackFetch`). */
  engineOptions?: Partial<LocalEngineOptions>;
  /** The server's configured public URL (OpenAPI `servers`, presigned URLs). */
  publicUrl?: string;
  /** The caller closes the server (one server shared by a file's tests, from beforeAll). */
  manualClose?: boolean;
  /**
   * An engine and server of its own on a directory of its own, instead of a tenant of the
   * file's shared host: tests of what a local data directory holds at its top (the key ring).
   */
  dedicated?: boolean;
}

/**
 * Another server for the same suites: apps/api's test setup registers the cloud here, so a
 * suite listed in the root vitest config's `cloud-rest` project runs against both targets.
 */
export type ServerTarget = (options: TestServerOptions) => Promise<TestServer>;
let target: ServerTarget | undefined;

export function useServerTarget(next: ServerTarget): void {
  target = next;
}

/** True when the suites run against another target (tests of local-only behaviour skip there). */
export function onCloudTarget(): boolean {
  return target !== undefined;
}

/**
 * The real REST server on a free loopback port, over a fresh data directory: a fresh tenant of
 * the file's shared host (local-host.ts) unless the options need a server of its own.
 */
export async function startServer(options: TestServerOptions = {}): Promise<TestServer> {
  if (target !== undefined) {
    const server = await target(options);
    if (!options.manualClose) cleanups.push(server.close);
    return server;
  }
  return (await onSharedHost(options)) ?? startDedicated(options);
}

/** Engine options a tenant takes (the rest are the cell's, which the shared host fixes). */
const TENANT_OPTIONS = new Set([
  "auditFlushMs",
  "auditRetentionMs",
  "maxOpenFiles",
  "definitions",
  "embedder",
  "changeLog",
]);

/**
 * A test's server as a tenant of the file's host for its cell options: none when the test
 * manages the server's life itself, asks for a dedicated one, names a data directory the host
 * does not own, passes other cell options, or already has the host (a second server).
 */
async function onSharedHost(options: TestServerOptions): Promise<TestServer | undefined> {
  if (options.manualClose || options.dedicated) return undefined;
  const { allowLoopbackFetch = false, ...tenantOptions } = options.engineOptions ?? {};
  if (Object.keys(tenantOptions).some((name) => !TENANT_OPTIONS.has(name))) return undefined;
  const key = JSON.stringify([allowLoopbackFetch, options.publicUrl ?? null]);
  const host =
    options.dataDir === undefined
      ? await sharedHost(key, { allowLoopbackFetch, publicUrl: options.publicUrl, conformance: true })
      : await startedHost(key);
  if (host === undefined || host.busy || (options.dataDir !== undefined && !host.owns(options.dataDir))) {
    return undefined;
  }
  const clock = options.clock ?? new ManualClock(1_800_000_000_000);
  const tenant = host.attach({
    clock,
    authenticate: options.authenticate,
    rootToken: options.rootToken,
    options: tenantOptions,
    dataDir: options.dataDir,
  });
  if (options.dataDir === undefined) cleanups.push(() => rmSync(tenant.dataDir, { recursive: true, force: true }));
  cleanups.push(tenant.release);
  return {
    url: host.url,
    engine: tenant.engine,
    clock,
    dataDir: tenant.dataDir,
    cellDir: host.dir,
    close: tenant.release,
    workspace: "local",
    auth: options.rootToken === undefined ? {} : { authorization: `Bearer ${options.rootToken}` },
    api: (method, path, body, headers) => requestJson(host.url, method, path, body, headers),
  };
}

/** An engine and a server of its own. */
async function startDedicated(options: TestServerOptions): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "prim-http-"));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (options.dataDir === undefined && !options.manualClose) cleanups.push(removeDir);
  const clock = options.clock ?? new ManualClock(1_800_000_000_000);
  const engine = Engine.openLocal({ ...options.engineOptions, dataDir, clock });
  const app = options.authenticate
    ? createServer({ ...engineDoor(engine), authenticate: options.authenticate, publicUrl: options.publicUrl })
    : createLocalServer({ engine, rootToken: options.rootToken, publicUrl: options.publicUrl });
  checkResponses(app, (name) => engine.operation(name));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
    await engine.close();
    if (options.dataDir === undefined && options.manualClose) removeDir();
  };
  if (!options.manualClose) cleanups.push(close);
  return {
    url,
    engine,
    clock,
    dataDir,
    close,
    workspace: "local",
    auth: options.rootToken === undefined ? {} : { authorization: `Bearer ${options.rootToken}` },
    api: (method, path, body, headers) => requestJson(url, method, path, body, headers),
  };
}

/** A JSON request over real HTTP to `base`; `body` is JSON-encoded unless it is a string. */
export async function requestJson<T = any>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** A server with group `app` and a kv primitive `cache` in it. */
export async function withKv(options: TestServerOptions = {}) {
  const server = await startServer(options);
  await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  const kv = await server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name: "cache",
    type: "kv",
    group: "app",
  });
  return { ...server, kv, base: `/v1/primitives/${kv.id}` };
}
