import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorkspace, migrate } from "@prim/db";
import { freshDatabase, PG_ROOT } from "@prim/testkit";
import { call } from "@prim/testkit/cloud";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiApp, createApiApp, readApiEnv } from "../src/index.js";

// Postgres going away while the api serves: the api reaches Postgres through a TCP proxy this
// test cuts (every connection reset, new ones refused) and restores. Requests answer 2xx or
// 500 internal_error, never hang; acknowledged writes and their audit entries survive; once
// Postgres is back everything works again without a restart, cache invalidation included.

class PgProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async up(): Promise<void> {
    const target = new URL(PG_ROOT);
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, "127.0.0.1", resolve));
    const address = this.server.address();
    if (typeof address === "object" && address !== null) this.port = address.port;
  }

  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}

const db = freshDatabase("outage");
const dir = mkdtempSync(join(tmpdir(), "prim-outage-"));
const proxy = new PgProxy();
let api: ApiApp;
let other: ApiApp;
let url: string;
let otherUrl: string;
let key: string;
let workspace: string;

async function open(databaseUrl: string, name: string): Promise<{ api: ApiApp; url: string }> {
  const env = readApiEnv({
    DATABASE_URL: databaseUrl,
    PRIM_DATA_DIR: join(dir, name),
    PRIM_BLOBS: `local:${join(dir, `${name}-blobs`)}`, // the outage under test is Postgres's alone
    PRIM_API_PORT: "0",
    PRIM_LIMITS: "off", // a key's 20/s would refuse this test's bursts; limits-outage tests Redis away
  });
  const app = await createApiApp(env);
  return { api: app, url: await app.app.listen({ port: 0, host: "127.0.0.1" }) };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  await proxy.up();
  const proxied = new URL(db.url);
  proxied.port = String(proxy.port);
  ({ api, url } = await open(proxied.toString(), "a"));
  ({ api: other, url: otherUrl } = await open(db.url, "b"));
  const created = await createWorkspace(other.hub.pool, { name: "Outage", plan: "pro" });
  ({ key } = created);
  workspace = created.workspace.id;
}, 60_000);

afterAll(async () => {
  await api?.close();
  await other?.close();
  await proxy.down();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("Postgres down while serving", () => {
  it("answers 2xx or 500 internal_error during the outage and recovers by itself, losing nothing", async () => {
    // The api drops its cached catalog when it hears its own creates' NOTIFY, which can arrive
    // after the first put (it did, with another file running beside this one): wait until our
    // own listener has heard them and 300 ms passed quietly, so the put below warms the cache
    // the outage relies on.
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    await listener.query("LISTEN prim_catalog");
    let lastNotice = 0;
    listener.on("notification", (m) => {
      if (m.payload === workspace) lastNotice = Date.now();
    });
    await call(url, key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body;
    const base = `/v1/primitives/${kv.id}`;
    await until("the creates' notices to go quiet", async () =>
      lastNotice > 0 && Date.now() - lastNotice > 300 ? true : undefined,
    );
    await listener.end();
    expect((await call(url, key, "PUT", `${base}/keys/before`, { value: 1 })).status).toBe(200);

    await proxy.down();
    const acknowledged: string[] = [];
    const statuses = new Set<string>();
    for (let i = 0; i < 20; i++) {
      // The key and the primitive are cached: kv calls need no Postgres; the audit waits.
      const put = await call(url, key, "PUT", `${base}/keys/during-${i}`, { value: i });
      statuses.add(`${put.status} ${put.body?.error?.code ?? ""}`.trim());
      if (put.status === 200) acknowledged.push(`during-${i}`);
      // These read Postgres: a fault, said so, not a hang.
      const groups = await call(url, key, "GET", "/v1/groups");
      statuses.add(`${groups.status} ${groups.body?.error?.code ?? ""}`.trim());
    }
    for (const status of statuses) expect(status).toMatch(/^(200|500 internal_error)$/);
    expect(statuses).toContain("500 internal_error");
    expect(acknowledged.length).toBeGreaterThan(0);

    await proxy.up();
    await until("the api to reach Postgres again", async () =>
      (await call(url, key, "GET", "/v1/groups")).status === 200 ? true : undefined,
    );
    for (const name of ["before", ...acknowledged]) {
      expect((await call(url, key, "GET", `${base}/keys/${name}`)).status, name).toBe(200);
    }
    // The audit entries of the writes acknowledged during the outage arrive once it is over.
    const logged = await until("the outage's audit entries", async () => {
      const trail = await call(url, key, "GET", "/v1/audit?action=kv.set&limit=200");
      const targets = new Set(trail.body.data.map((e: { target: string }) => e.target));
      return acknowledged.every((k) => targets.has(k)) ? trail.body.data.length : undefined;
    });
    expect(logged).toBe(acknowledged.length + 1);

    // Invalidation works again: a rename made by another process is seen here.
    expect((await call(url, key, "GET", base)).body.name).toBe("cache");
    expect((await call(otherUrl, key, "PATCH", base, { name: "renamed" })).status).toBe(200);
    await until("the rename to reach the proxied api", async () =>
      (await call(url, key, "GET", base)).body.name === "renamed" ? true : undefined,
    );
  }, 90_000);
});
