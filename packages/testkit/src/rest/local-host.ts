// One local cell and one HTTP server for all the tests of a file (issue 36: opening an engine,
// building the app and starting SQL hosts for every test cost half a second or more each).
// Each test gets a fresh tenant of that cell: the `local` workspace on a directory of its own
// (catalog, audit trail, primitives, blobs, snapshots) on a ManualClock of its own, and its own
// way of authenticating requests. So no test sees another's groups, primitives, data, audit
// entries, timers or clock moves. What the tests of a file share is what the API never shows:
// the SQL host processes (each db is its own file), the audit writer thread, the URL signing
// key and the vault key ring (`master.key`, `keys.sqlite`: data keys per group id, never reused).
// The cloud target (apps/api/test/rest-target.ts) does the same with a workspace per test.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import {
  Cell,
  type Clock,
  Engine,
  type Invoker,
  LOCAL_WORKSPACE,
  ManualClock,
  OPERATIONS,
  type Principal,
  type TenantOptions,
} from "@prim/engine";
import { createServer, localAuthenticator } from "@prim/http";
import type { ChangeFeed } from "@prim/wire";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { afterAll } from "vitest";
import { checkResponses } from "./conformance.js";

/** What a host is built with: the same for every test it serves. */
export interface HostOptions {
  /** The cell's test-only `allowLoopbackFetch` (vault fetches to the echo server). */
  allowLoopbackFetch?: boolean;
  /** The server's configured public URL (OpenAPI `servers`, presigned URLs). */
  publicUrl?: string;
  /** Checks every REST answer against the OpenAPI document (conformance.ts; the REST suites). */
  conformance?: boolean;
  /**
   * Mounts more on the app before it listens (the MCP tests' `/mcp`), with the host's invoker
   * and the cell's change feed (its engines' change notices: MCP resource subscriptions).
   */
  mount?: (app: FastifyInstance, invoker: Invoker, changes: ChangeFeed) => void;
}

/** What one test's tenant is opened with. */
export interface TenantSpec {
  clock: ManualClock;
  /** Replaces local auth for this tenant's requests (tests of scoped credentials). */
  authenticate?: (req: FastifyRequest) => Principal;
  /** Local auth with a root token (ignored with `authenticate`). */
  rootToken?: string;
  /** The tenant's engine options (embedder, audit window …). */
  options?: Omit<TenantOptions, "dataDir" | "catalog" | "blobs">;
  /** Reopens this tenant directory (a restart on the same data); default: a new directory. */
  dataDir?: string;
}

export interface Tenant {
  engine: Engine;
  dataDir: string;
  /** Closes the tenant's engine (its files stay until the test ends); idempotent. */
  release(): Promise<void>;
}

export interface LocalHost {
  url: string;
  /** The cell's directory: its key ring and signing key, and one directory per tenant. */
  dir: string;
  /** The door to the current tenant's engine (what the app's routes call). */
  invoker: Invoker;
  /** A tenant is open: another server in the same test needs a host of its own. */
  readonly busy: boolean;
  /** Whether `dataDir` is one of this host's tenant directories. */
  owns(dataDir: string): boolean;
  attach(spec: TenantSpec): Tenant;
  close(): Promise<void>;
}

const operations = new Map(OPERATIONS.map((op) => [op.name, op]));

/** Starts a cell and its server on a free loopback port, over a fresh directory. */
export async function openHost(options: HostOptions = {}): Promise<LocalHost> {
  const dir = mkdtempSync(join(tmpdir(), "prim-host-"));
  let clock: Clock = new ManualClock(1_800_000_000_000);
  /** The cell's clock: the current tenant's. */
  const switchClock: Clock = { now: () => clock.now(), at: (at, fn) => clock.at(at, fn) };
  let current: { engine: Engine; authenticate: (req: FastifyRequest) => Principal } | undefined;
  const tenant = () => {
    if (current === undefined) throw new Error("no test is using this server now");
    return current;
  };
  const invoker: Invoker = {
    invoke: (principal, opName, target, input, meta) => tenant().engine.invoke(principal, opName, target, input, meta),
  };
  let cell: Cell | undefined;
  let app: FastifyInstance | undefined;
  try {
    cell = Cell.openLocal({ dataDir: dir, clock: switchClock, allowLoopbackFetch: options.allowLoopbackFetch });
    app = createServer({
      invoker,
      operation: (name) => operations.get(name),
      authenticate: (req) => tenant().authenticate(req),
      publicUrl: options.publicUrl,
    });
    if (options.conformance) checkResponses(app, (name) => operations.get(name));
    options.mount?.(app, invoker, cell.changes);
    await app.listen({ port: 0, host: "127.0.0.1" });
  } catch (err) {
    await app?.close();
    await cell?.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  const openCell = cell;
  const openApp = app;
  let count = 0;
  return {
    url,
    dir,
    invoker,
    get busy() {
      return current !== undefined;
    },
    owns: (dataDir) => {
      const rel = relative(dir, dataDir);
      return rel !== "" && !rel.startsWith("..") && !rel.includes(sep);
    },
    attach(spec) {
      if (current !== undefined) throw new Error("this server already serves a test");
      const dataDir = spec.dataDir ?? join(dir, `t${++count}`);
      clock = spec.clock;
      const engine = Engine.forWorkspace(openCell, LOCAL_WORKSPACE, { ...spec.options, dataDir });
      const mine = { engine, authenticate: spec.authenticate ?? localAuthenticator({ rootToken: spec.rootToken }) };
      current = mine;
      return {
        engine,
        dataDir,
        release: async () => {
          if (current === mine) current = undefined;
          await engine.close();
        },
      };
    },
    async close() {
      current = undefined;
      await openApp.close();
      await openCell.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What the tests of a file share, by key: opened on first use (a failed open is tried again by
 * the next), closed after the file's last test.
 */
export class PerFile<K, T extends { close(): Promise<void> }> {
  private readonly opened = new Map<K, Promise<T>>();

  constructor() {
    afterAll(async () => {
      const settled = await Promise.allSettled(this.opened.values());
      this.opened.clear();
      for (const one of settled) if (one.status === "fulfilled") await one.value.close();
    });
  }

  /** The one for `key`, opened with `open` on first use. */
  get(key: K, open: () => Promise<T>): Promise<T> {
    let one = this.opened.get(key);
    if (one === undefined) {
      one = open();
      this.opened.set(key, one);
      one.catch(() => this.opened.delete(key));
    }
    return one;
  }

  /** The one for `key` if it was opened. */
  async started(key: K): Promise<T | undefined> {
    const one = this.opened.get(key);
    return one === undefined ? undefined : one.catch(() => undefined);
  }
}

const hosts = new PerFile<string, LocalHost>();

/** The file's host for `key` (started on first use, closed after the file's last test). */
export function sharedHost(key: string, options: HostOptions): Promise<LocalHost> {
  return hosts.get(key, () => openHost(options));
}

/** The file's host for `key` if it was started (a restart looks for its data directory's). */
export function startedHost(key: string): Promise<LocalHost | undefined> {
  return hosts.started(key);
}
