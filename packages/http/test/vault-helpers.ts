import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_PRINCIPAL, type PrimitiveInfo, type Principal } from "@prim/engine";
import { type ApiResponse, startServer, type TestServer, type TestServerOptions } from "@prim/testkit/rest";
import { afterEach, beforeEach, expect } from "vitest";
import { type EchoServer, startEcho } from "./vault-echo.js";

/**
 * The secret every vault test stores. It holds characters that URL-, JSON- and base64-encode
 * differently, so each redacted form is a distinct string.
 */
export const SECRET = `sk-live/${randomBytes(12).toString("hex")}+Q="z"=${randomBytes(6).toString("hex")}`;

const escapeJson = (text: string) => JSON.stringify(text).slice(1, -1);

/** Base64 of SECRET starting `shift` bytes into a group, without the characters its neighbours change. */
function base64Inner(shift: number, alphabet: "base64" | "base64url"): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), Buffer.from(SECRET)]).toString(alphabet);
  return encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + Buffer.byteLength(SECRET))) / 6));
}

/**
 * The forms of SECRET that must never appear anywhere the test can see: as is, JSON-escaped
 * once to three times (a JSON body inside a JSON response), URL-encoded, and base64 at every
 * alignment (a binary body returned as base64).
 */
export const LEAK_FORMS: Record<string, string> = {
  plain: SECRET,
  json: escapeJson(SECRET),
  json2: escapeJson(escapeJson(SECRET)),
  json3: escapeJson(escapeJson(escapeJson(SECRET))),
  url: encodeURIComponent(SECRET),
  base64: Buffer.from(SECRET).toString("base64"),
  base64url: Buffer.from(SECRET).toString("base64url"),
  ...Object.fromEntries(
    [0, 1, 2].flatMap((shift) => [
      [`base64@${shift}`, base64Inner(shift, "base64")],
      [`base64url@${shift}`, base64Inner(shift, "base64url")],
    ]),
  ),
};

/** Letters lower-cased, byte for byte (latin1 keeps every byte one character). */
const fold = (bytes: Buffer) => bytes.toString("latin1").toLowerCase();

/** Which forms of SECRET occur in `text`, in any letter case (empty when none). */
export function leaksIn(text: string | Buffer): string[] {
  const haystack = fold(typeof text === "string" ? Buffer.from(text, "utf8") : text);
  return Object.entries(LEAK_FORMS)
    .filter(([, form]) => haystack.includes(fold(Buffer.from(form, "utf8"))))
    .map(([name]) => name);
}

interface Tracked {
  server: TestServer;
  closed: boolean;
}

const tracked: Tracked[] = [];
const captured: string[] = [];
const echoes: EchoServer[] = [];
let restoreConsole: (() => void) | null = null;

/** Everything written to the console or stdout/stderr during a test is kept for the leak scan. */
beforeEach(() => {
  const originals = {
    log: console.log,
    info: console.info,
    warn: console.warn,
    error: console.error,
    debug: console.debug,
    stdout: process.stdout.write,
    stderr: process.stderr.write,
  };
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    console[level] = (...args: unknown[]) => {
      captured.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      originals[level].apply(console, args);
    };
  }
  for (const stream of ["stdout", "stderr"] as const) {
    const original = originals[stream];
    process[stream].write = ((chunk: unknown, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return (original as (...a: unknown[]) => boolean).call(process[stream], chunk, ...rest);
    }) as typeof process.stdout.write;
  }
  restoreConsole = () => {
    for (const level of ["log", "info", "warn", "error", "debug"] as const) console[level] = originals[level];
    process.stdout.write = originals.stdout;
    process.stderr.write = originals.stderr;
  };
});

/** All files under a directory, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The files directly in a directory. */
function filesIn(dir: string): string[] {
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

/**
 * The leak scan after every vault test (it runs before the shared helpers close the servers):
 * every response body and header the test received, every audit entry, everything written to
 * the console, and every byte of every file in the data directories (and the cell's key ring
 * beside them) must be free of SECRET.
 */
afterEach(async () => {
  restoreConsole?.();
  restoreConsole = null;
  const findings: string[] = [];
  for (const { server, closed } of tracked.splice(0)) {
    if (!closed) {
      await server.engine.services.audit.flush();
      const audit = await server.engine.services.catalog.listAudit({ limit: 1000 });
      for (const form of leaksIn(JSON.stringify(audit))) findings.push(`audit trail (${form})`);
    }
    // A tenant of the file's shared host: its cell's own files (the key ring) too.
    const cellFiles = server.cellDir === undefined ? [] : filesIn(server.cellDir);
    for (const file of [...filesUnder(server.dataDir), ...cellFiles]) {
      for (const form of leaksIn(readFileSync(file))) findings.push(`${file} (${form})`);
    }
  }
  captured.forEach((text, i) => {
    for (const form of leaksIn(text)) findings.push(`captured output #${i} (${form})`);
  });
  captured.length = 0;
  for (const echo of echoes.splice(0)) await echo.close();
  expect(findings, "SECRET leaked").toEqual([]);
});

export interface VaultServer extends TestServer {
  vault: PrimitiveInfo;
  base: string;
  /** The destination server on 127.0.0.1. */
  echo: EchoServer;
  put(name: string, value: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  grant(body: Record<string, unknown>, headers?: Record<string, string>): Promise<ApiResponse>;
  fetch(body: Record<string, unknown>, headers?: Record<string, string>): Promise<ApiResponse>;
}

/** A started echo server that the leak scan closes after the test. */
export async function echoServer(host = "127.0.0.1"): Promise<EchoServer> {
  const echo = await startEcho(host);
  echoes.push(echo);
  return echo;
}

/** Tracks a server for the leak scan, and records every response it gives the test. */
export function watch(server: TestServer): TestServer {
  const entry: Tracked = { server, closed: false };
  tracked.push(entry);
  const api = server.api;
  const close = server.close;
  const watched: TestServer = {
    ...server,
    async api(method, path, body, headers) {
      const res = await api(method, path, body, headers);
      captured.push(res.text, JSON.stringify([...res.headers.entries()]));
      return res;
    },
    async close() {
      entry.closed = true;
      await close();
    },
  };
  entry.server = watched;
  return watched;
}

export interface VaultOptions extends TestServerOptions {
  /** The engine's test-only `allowLoopbackFetch` (default true: the echo server is on loopback). */
  loopback?: boolean;
  /** Reuse this vault (after a restart) instead of creating one. */
  vault?: PrimitiveInfo;
}

/** A server with group `app` and a vault `keys` (or the given one), an echo server, and helpers. */
export async function withVault(options: VaultOptions = {}): Promise<VaultServer> {
  const server = watch(
    await startServer({
      ...options,
      engineOptions: { allowLoopbackFetch: options.loopback ?? true, ...options.engineOptions },
    }),
  );
  let vault = options.vault;
  if (vault === undefined) {
    await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
    vault = await server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
      name: "keys",
      type: "vault",
      group: "app",
    });
  }
  const base = `/v1/primitives/${vault.id}`;
  return {
    ...server,
    vault,
    base,
    echo: await echoServer(),
    put: (name, value, headers) => server.api("PUT", `${base}/secrets/${name}`, { value }, headers),
    grant: (body, headers) => server.api("POST", `${base}/grants`, body, headers),
    fetch: (body, headers) => server.api("POST", `${base}/fetch`, body, headers),
  };
}

/** Stores SECRET as `API_KEY` and grants it to the echo server's host. */
export async function withGrantedSecret(options: VaultOptions = {}, allow: Record<string, unknown> = {}) {
  const server = await withVault(options);
  expect((await server.put("API_KEY", SECRET)).status).toBe(200);
  expect((await server.grant({ name: "API_KEY", allow: { hosts: [server.echo.host], ...allow } })).status).toBe(201);
  return server;
}

/** A principal switcher: requests with `Authorization: Bearer scoped` run as a key of group `app`. */
export function scopedAuth() {
  let scoped: Principal = { kind: "scoped", workspace: "local", actor: "key:key_vault", groupId: null, tools: null };
  return {
    authenticate: (req: { headers: Record<string, unknown> }) =>
      req.headers.authorization === "Bearer scoped" ? scoped : LOCAL_PRINCIPAL,
    as(groupId: string, tools: string[] | null) {
      scoped = { kind: "scoped", workspace: "local", actor: "key:key_vault", groupId, tools };
    },
    headers: { authorization: "Bearer scoped" },
  };
}
