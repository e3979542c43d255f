// usage.summary and the audit page's actor names against a real Postgres database and the
// machine's Redis. Usage: the figures the
// limiter's roll-up wrote (usage_daily, usage_primitive_daily) come back as the procedure's
// numbers for this UTC month — issue 39: the procedure asked for month "202611" while readUsage
// compares "2026-11", so the page showed 0 operations and 0 bytes over a month of rows. The month
// is one checked type now (`usageMonth`), used for Postgres and for the Redis counter alike.
import * as PrimDb from "@prim/db";
import {
  createKey,
  createUser,
  createWorkspace,
  migrate,
  operationsKeyPrefix,
  Revocations,
  recordConnection,
  removeMember,
  resolveActors,
  revokeKey,
  usageMonth,
} from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import { keyStart } from "@prim/wire";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerWith, testContext } from "./trpc-caller";

const REDIS = "redis://127.0.0.1:6379";
const db = freshDatabase("webusage");
let pool: pg.Pool;
let revocations: Revocations;
let redis: Redis;
let owner: { id: string; email: string };

function caller() {
  const context = testContext({
    pool,
    invoker: {
      invoke: () => {
        throw new Error("usage.summary reaches no data");
      },
    },
    apiUrl: "https://api.prim.test",
    operations: (ws, month) => revocations.operations(ws, month),
  });
  return callerWith(context, owner);
}

/** Today in UTC, and a day of this month before it when there is one. */
const today = new Date().toISOString().slice(0, 10);
const earlier = today.endsWith("-01") ? null : `${today.slice(0, 8)}01`;

beforeAll(async () => {
  await migrate({ databaseUrl: db.url, log: () => {} });
  pool = new pg.Pool({ connectionString: db.url });
  revocations = new Revocations(REDIS);
  redis = new Redis(REDIS);
  const email = "owner@usage.test";
  owner = { id: (await createUser(pool, { email, password: "password123" })).id, email };
});

afterAll(async () => {
  await revocations?.close();
  redis?.disconnect();
  await pool?.end();
  await db.drop();
});

async function workspaceWith(plan: "starter" | "pro"): Promise<string> {
  return (await createWorkspace(pool, { name: `Usage ${plan}`, ownerId: owner.id, key: false, plan })).workspace.id;
}

describe("usage.summary", () => {
  it("answers the month's rows of usage_daily and usage_primitive_daily, with Starter's caps", async () => {
    const ws = await workspaceWith("starter");
    const rows: [string, number, number][] = [[today, 72, 30_000_000]];
    if (earlier !== null) rows.unshift([earlier, 28, 31_000_000]);
    // Last month's row must not count.
    rows.push([
      `${new Date(Date.UTC(Number(today.slice(0, 4)), Number(today.slice(5, 7)) - 2, 15)).toISOString().slice(0, 10)}`,
      999,
      1,
    ]);
    for (const [day, ops, bytes] of rows) {
      await pool.query(
        "INSERT INTO usage_daily (workspace_id, day, operations, storage_bytes) VALUES ($1, $2, $3, $4)",
        [ws, day, ops, bytes],
      );
    }
    // Two primitives: one still in the catalog, one deleted since.
    await pool.query(
      "INSERT INTO groups (id, workspace_id, name, namespace, created_at) VALUES ('grp_u1', $1, 'app', 'ns', 0)",
      [ws],
    );
    await pool.query(
      "INSERT INTO primitives (id, workspace_id, name, type, group_id, created_at) VALUES ('01usageprim0000000000000kv', $1, 'cache', 'kv', 'grp_u1', 0)",
      [ws],
    );
    await PrimDb.addPrimitiveUsage(pool, [
      { workspace: ws, day: today, primitive: "01usageprim0000000000000kv", operations: 40 },
      { workspace: ws, day: today, primitive: "01usagegone0000000000000db", operations: 12 },
    ]);
    // Added again, as another process's roll-up does: the rows sum.
    await PrimDb.addPrimitiveUsage(pool, [
      { workspace: ws, day: today, primitive: "01usageprim0000000000000kv", operations: 5 },
    ]);

    const summary = await caller().usage.summary({ workspace: ws });
    const month = today.slice(0, 7);
    const expectedDays = rows
      .filter(([day]) => day.startsWith(month))
      .map(([day, operations, storage_bytes]) => ({ day, operations, storage_bytes }));
    expect(summary).toMatchObject({
      workspace: { id: ws, plan: "starter" },
      month,
      operations: expectedDays.reduce((n, d) => n + d.operations, 0),
      storage_bytes: Math.max(...expectedDays.map((d) => d.storage_bytes)),
      days: expectedDays,
      primitives: 1,
      caps: PrimDb.STARTER_CAPS,
      included: null,
      live: true,
      top_primitives: [
        { id: "01usageprim0000000000000kv", name: "cache", type: "kv", group: "app", operations: 45 },
        { id: "01usagegone0000000000000db", name: null, type: null, group: null, operations: 12 },
      ],
    });
  });

  it("takes the live Redis counter of the month (the limiter's key) when it is ahead of the roll-up", async () => {
    const ws = await workspaceWith("pro");
    await pool.query("INSERT INTO usage_daily (workspace_id, day, operations, storage_bytes) VALUES ($1, $2, 10, 5)", [
      ws,
      today,
    ]);
    // The limiter's script names the month counter `<prefix>YYYYMM` from Redis's clock.
    const key = operationsKeyPrefix(ws) + today.slice(0, 7).replace("-", "");
    await redis.set(key, "17", "EX", 60);
    try {
      const summary = await caller().usage.summary({ workspace: ws });
      expect(summary).toMatchObject({ operations: 17, storage_bytes: 5, caps: null, live: true });
    } finally {
      await redis.del(key);
    }
  });

  it("has one month form: YYYY-MM, checked; the counter's YYYYMM is refused where a month is read", async () => {
    expect(usageMonth(Date.UTC(2026, 10, 30, 23, 59))).toBe("2026-11");
    expect(usageMonth("2026-11")).toBe("2026-11");
    for (const bad of ["202611", "2026-13", "2026-1", "26-11"]) {
      expect(() => usageMonth(bad)).toThrow(/month: expected YYYY-MM/);
    }
    const ws = await workspaceWith("starter");
    // A caller that forces the old form past the type is refused, not answered zeros.
    await expect(PrimDb.readUsage(pool, ws, { month: "202611" as PrimDb.UsageMonth })).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(revocations.operations(ws, "202611" as PrimDb.UsageMonth)).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});

describe("audit actors by name (resolveActors: one query per page)", () => {
  it("names users by email, keys by name and start, apps by client and user, system actors by word; the removed, revoked and deleted marked", async () => {
    const ws = await workspaceWith("pro");
    const email = "gone@usage.test";
    const leaver = (await createUser(pool, { email, password: "password123", workspace: ws, role: "member" })).id;
    const stays = await createKey(pool, { workspace: ws, name: "ci deploys" });
    const unnamed = await createKey(pool, { workspace: ws });
    const revoked = await createKey(pool, { workspace: ws, name: "old laptop" });
    await revokeKey(pool, revoked.id, async () => {}, ws);
    await pool.query(
      "INSERT INTO groups (id, workspace_id, name, namespace, created_at) VALUES ('grp_a1', $1, 'app', 'ns', 0)",
      [ws],
    );
    const app = await recordConnection(pool, {
      grantId: "grant_1",
      clientId: "https://claude.test/client.json",
      clientName: "Claude",
      user: leaver,
      workspace: ws,
      groupId: "grp_a1",
      tools: ["kv_*"],
    });
    // The member leaves (their app connection ends with them).
    await removeMember(pool, { workspace: ws, user: leaver }, async () => {});
    // Another workspace's key is not this workspace's to name.
    const elsewhere = await createWorkspace(pool, { name: "Elsewhere", ownerId: owner.id });
    const actors = [
      `user:${owner.id}`,
      `user:${leaver}`,
      `key:${stays.id}`,
      `key:${unnamed.id}`,
      `key:${revoked.id}`,
      `oauth:${app}`,
      "admin",
      "stripe",
      "user:nobody",
      `key:${elsewhere.key_id}`,
      `user:${owner.id}`,
    ];
    const queries: string[] = [];
    const counting = new Proxy(pool, {
      get(target, prop) {
        if (prop === "query")
          return (text: string, ...rest: unknown[]) => {
            queries.push(text);
            return (target.query as (...a: unknown[]) => unknown).call(target, text, ...rest);
          };
        return Reflect.get(target, prop);
      },
    });
    const names = await resolveActors(counting, ws, actors);
    expect(queries).toHaveLength(1);
    expect(names).toEqual({
      [`user:${owner.id}`]: { kind: "user", label: "owner@usage.test", detail: null, gone: false },
      [`user:${leaver}`]: { kind: "user", label: email, detail: null, gone: true },
      [`key:${stays.id}`]: { kind: "key", label: "ci deploys", detail: `${keyStart(stays.key)}…`, gone: false },
      [`key:${unnamed.id}`]: { kind: "key", label: "Unnamed key", detail: `${keyStart(unnamed.key)}…`, gone: false },
      [`key:${revoked.id}`]: { kind: "key", label: "old laptop", detail: `${keyStart(revoked.key)}…`, gone: true },
      [`oauth:${app}`]: { kind: "oauth", label: "Claude", detail: email, gone: true },
      admin: { kind: "system", label: "Operator (prim admin)", detail: null, gone: false },
      stripe: { kind: "system", label: "Stripe", detail: null, gone: false },
      "user:nobody": { kind: "user", label: "Deleted user", detail: "user:nobody", gone: true },
      [`key:${elsewhere.key_id}`]: { kind: "key", label: "Deleted key", detail: `key:${elsewhere.key_id}`, gone: true },
    });
    // A page without people asks Postgres nothing.
    queries.length = 0;
    expect(await resolveActors(counting, ws, ["admin"])).toEqual({
      admin: { kind: "system", label: "Operator (prim admin)", detail: null, gone: false },
    });
    expect(queries).toEqual([]);
  });
});
