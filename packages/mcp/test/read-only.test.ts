// A read-only principal on MCP (issue 40, item 3), over the local engine: the tools are not
// hidden (tools/list is the same), and every action of every tool whose operation writes for its
// arguments answers the tool error `forbidden` from `engine.invoke`, changing nothing; db_query
// with a writing statement is refused, db_exec with only SELECTs runs, a batch holding one INSERT
// writes nothing — each next to the same call in a session without the flag, which writes. The
// same principal arrives from a read-only key or OAuth grant in the cloud: apps/mcp's
// read-only test sweeps every action with realistic arguments through both.
import { rmSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type AnyOperation, accessOf, LOCAL_PRINCIPAL, ManualClock, OPERATIONS, type Principal } from "@prim/engine";
import { openHost } from "@prim/testkit/rest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountMcp, TOOLS } from "../src/index.js";

const OPS = new Map<string, AnyOperation>(OPERATIONS.map((op) => [op.name, op]));
const READ_ONLY: Principal = { ...LOCAL_PRINCIPAL, readOnly: true };

/**
 * Arguments every tool's schema takes (each tool gets those of its own shape): valid in form,
 * so that what answers is the engine, not validation. Whether they name anything that exists
 * does not matter to a refusal decided before any lookup.
 */
const ARGS: Record<string, unknown> = {
  name: "made",
  type: "kv",
  sql: "INSERT INTO t VALUES ('ro')",
  path: "/x.txt",
  content: "x",
  from: "/dir",
  to: "/moved",
  key: "k",
  value: 1,
  items: [{ key: "m", value: 1 }],
  queue: "q",
  topic: "topic",
  body: 1,
  messages: [{ body: 1 }],
  job: "job_x",
  lease_token: "lease_x",
  acks: [{ job: "job_x", lease_token: "lease_x" }],
  status: "done",
  kind: "fact",
  text: "t",
  id: "mem_x",
  url: "https://example.com/",
  auth: { bearer: "SECRET" },
  method: "PUT",
  value_name: "SECRET",
};
/** Arguments that choose an action where a tool picks it from them (db_exec, kv_delete), or differ in form. */
const PICKING: Record<string, Record<string, unknown>> = {
  "db_exec.batch": { statements: [{ sql: "SELECT 1" }, { sql: "INSERT INTO t VALUES ('ro')" }] },
  "kv_delete.mdelete": { keys: ["k"] },
  "vault_use.fetch": { body: "x" },
};

let host: Awaited<ReturnType<typeof openHost>>;
let release: () => Promise<void>;
let dataDir: string;
const clients: Client[] = [];

beforeAll(async () => {
  host = await openHost({ mount: (app: FastifyInstance, door) => mountMcp(app, door) });
  // The caller is read-only when its request says so (what a read-only key's resolver answers).
  const tenant = host.attach({
    clock: new ManualClock(1_800_000_000_000),
    authenticate: (req) => (req.headers["x-read-only"] === "yes" ? READ_ONLY : LOCAL_PRINCIPAL),
  });
  ({ dataDir, release } = tenant);
}, 30_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await release?.();
  rmSync(dataDir, { recursive: true, force: true });
  await host?.close();
});

async function session(readOnly: boolean) {
  const client = new Client({ name: "read-only", version: "1.0.0" });
  const headers: Record<string, string> = readOnly ? { "x-read-only": "yes" } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp/g`), { requestInit: { headers } }));
  clients.push(client);
  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await client.callTool({ name, arguments: args });
    return { isError: res.isError === true, data: res.structuredContent as any };
  };
  return { client, call };
}

describe("a read-only principal on MCP", () => {
  let owner: Awaited<ReturnType<typeof session>>;
  let reader: Awaited<ReturnType<typeof session>>;
  const ids: Record<string, string> = {};
  /** What the group holds, read in the owner's session (equal before and after: nothing changed). */
  const state = async () => {
    const out: unknown[] = [(await owner.call("primitive_list", {})).data];
    out.push((await owner.call("kv_list", { primitive: ids.kv, values: true })).data);
    out.push((await owner.call("db_query", { primitive: ids.db, sql: "SELECT v FROM t ORDER BY v" })).data);
    out.push((await owner.call("fs_search", { primitive: ids.fs, action: "glob", pattern: "**" })).data);
    out.push((await owner.call("storage_list", { primitive: ids.storage })).data);
    out.push((await owner.call("queue_receive", { primitive: ids.queue, action: "queues" })).data);
    out.push((await owner.call("memory_recall", { primitive: ids.memory, action: "list" })).data);
    out.push((await owner.call("vault_list", { primitive: ids.vault })).data);
    return out;
  };

  beforeAll(async () => {
    owner = await session(false);
    for (const type of ["db", "fs", "queue", "memory", "vault", "kv", "storage"]) {
      const made = await owner.call("primitive_create", { name: type, type });
      expect(made.isError, JSON.stringify(made.data)).toBe(false);
      ids[type] = made.data.id;
    }
    await owner.call("kv_set", { primitive: ids.kv, key: "k", value: 1 });
    await owner.call("db_exec", {
      primitive: ids.db,
      statements: [{ sql: "CREATE TABLE t (v TEXT)" }, { sql: "INSERT INTO t VALUES ('x')" }],
    });
    await owner.call("fs_write", { primitive: ids.fs, path: "/dir/file.txt", content: "file" });
    await owner.call("storage_write", { primitive: ids.storage, key: "obj.txt", content: "object" });
    reader = await session(true);
  }, 30_000);

  it("sees every tool: nothing is hidden", async () => {
    const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();
    expect(await names(reader.client)).toEqual(await names(owner.client));
    expect(await names(reader.client)).toEqual(TOOLS.map((t) => t.name).sort());
  });

  it("is refused every action that writes (tool error forbidden), and nothing changes", async () => {
    await state(); // the first reads open each store's file (its size then settles)
    const before = await state();
    const wrong: string[] = [];
    let refused = 0;
    for (const tool of TOOLS) {
      for (const [action, spec] of Object.entries(tool.actions)) {
        const shape = Object.keys(tool.shape);
        const args: Record<string, unknown> = Object.fromEntries(
          Object.entries(ARGS).filter(([field]) => shape.includes(field) && field !== "action"),
        );
        if (shape.includes("action")) args.action = action;
        Object.assign(args, PICKING[`${tool.name}.${action}`]);
        if (tool.type !== undefined || tool.anyType) args.primitive = ids[tool.type ?? "kv"];
        if (accessOf(OPS.get(spec.op) as AnyOperation, args) !== "write") continue;
        const res = await reader.call(tool.name, args);
        const code = res.isError ? res.data?.error?.code : "ok";
        if (code !== "forbidden" || !String(res.data?.error?.message).includes("read-only")) {
          wrong.push(`${tool.name}.${action} ${JSON.stringify(args)}: ${JSON.stringify(res.data).slice(0, 200)}`);
        }
        refused++;
      }
    }
    expect(wrong).toEqual([]);
    expect(refused).toBeGreaterThan(35);
    expect(await state()).toEqual(before);
  });

  it("db: db_query with INSERT refused, db_exec with a SELECT runs, a batch with one INSERT writes nothing; the owner's same calls write", async () => {
    const db = ids.db;
    const count = async () =>
      (await owner.call("db_query", { primitive: db, sql: "SELECT count(*) AS n FROM t" })).data.rows[0].n;
    const before = await count();
    const insert = await reader.call("db_query", { primitive: db, sql: "INSERT INTO t VALUES ('q')" });
    expect([insert.isError, insert.data.error?.code]).toEqual([true, "forbidden"]);
    const select = await reader.call("db_exec", { primitive: db, sql: "SELECT v FROM t" });
    expect([select.isError, select.data.rows]).toEqual([false, [{ v: "x" }]]);
    const statements = [{ sql: "SELECT 1" }, { sql: "INSERT INTO t VALUES ('b')" }, { sql: "SELECT 2" }];
    const batch = await reader.call("db_exec", { primitive: db, statements });
    expect([batch.isError, batch.data.error?.code]).toEqual([true, "forbidden"]);
    const reads = await reader.call("db_exec", { primitive: db, statements: [{ sql: "SELECT 1 AS a" }] });
    expect(reads.isError).toBe(false);
    expect(await count()).toBe(before);
    // Without the flag, the same statements write (through db_exec: db_query alone never writes on MCP).
    expect((await owner.call("db_exec", { primitive: db, sql: "INSERT INTO t VALUES ('q')" })).isError).toBe(false);
    expect((await owner.call("db_exec", { primitive: db, statements })).isError).toBe(false);
    expect(await count()).toBe(before + 2);
  });
});
