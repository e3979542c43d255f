// The key resolver's `pa_` tokens (src/control/attenuated-tokens.ts) against a real Postgres: the
// principal each caveat leaves, expiry under a moved clock (cached or not), the client address
// check (IPv4-mapped IPv6 included), and revocation of the root dropping every cached token.
import { ApiKeyResolver, createKey, createWorkspace, hashKey, migrate, openPool, revokeKey } from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import { attenuate, keyStart, workspaceTag } from "@prim/wire";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const db = freshDatabase("attenuate");
let pool: pg.Pool;
let workspace: string;
let key: string;
const groupId = "grp_attenuate_app";

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  pool = await openPool(db.url);
  const made = await createWorkspace(pool, { name: "Att", plan: "pro" });
  workspace = made.workspace.id;
  key = made.key;
  await pool.query("INSERT INTO groups (id, workspace_id, name, namespace, created_at) VALUES ($1, $2, 'app', $1, 0)", [
    groupId,
    workspace,
  ]);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await db.drop();
});

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (err: { code?: string }) => err.code,
  );

describe("pa_ tokens resolve to the key's principal, narrowed", () => {
  it("each caveat takes away: group id by name, tools as a further allowlist, read-only; the actor stays the key's", async () => {
    const resolver = new ApiKeyResolver(pool);
    const root = await resolver.resolve(key);
    expect(root.kind).toBe("account");
    const token = await attenuate(key, [
      { type: "group", group: "app" },
      { type: "tools", tools: ["kv_get"] },
      { type: "read_only" },
    ]);
    expect(await resolver.resolve(token)).toMatchObject({
      kind: "scoped",
      workspace,
      actor: root.actor,
      groupId,
      tools: null,
      narrowed: [["kv_get"]],
      readOnly: true,
    });
    // Only expiry or address caveats: still the workspace's own reach.
    const timed = await attenuate(key, [{ type: "expires", at: Date.now() + 60_000 }]);
    expect((await resolver.resolve(timed)).kind).toBe("account");
  });

  it("carry the key's workspace tag; a tag changed to another workspace's is 401 invalid_token", async () => {
    const token = await attenuate(key, [{ type: "read_only" }]);
    expect(token.startsWith(`pa_${workspaceTag(workspace)}_`)).toBe(true);
    const other = await createWorkspace(pool, { name: "Other", plan: "pro" });
    const forged = token.replace(`pa_${workspaceTag(workspace)}_`, `pa_${workspaceTag(other.workspace.id)}_`);
    expect(await codeOf(new ApiKeyResolver(pool).resolve(forged))).toBe("invalid_token");
    expect((await new ApiKeyResolver(pool).resolve(token)).workspace).toBe(workspace);
  });

  it("an unknown group is 403 group_mismatch", async () => {
    const token = await attenuate(key, [{ type: "group", group: "nowhere" }]);
    expect(await codeOf(new ApiKeyResolver(pool).resolve(token))).toBe("group_mismatch");
  });

  it("expiry follows the clock, also for a token verified before", async () => {
    let now = 1_000_000;
    const resolver = new ApiKeyResolver(pool, { now: () => now });
    const token = await attenuate(key, [{ type: "expires", at: 1_060_000 }]);
    expect(await codeOf(resolver.resolve(token))).toBe("ok");
    now = 1_059_999;
    expect(await codeOf(resolver.resolve(token))).toBe("ok");
    now = 1_060_000;
    expect(await codeOf(resolver.resolve(token))).toBe("invalid_token");
  });

  it("ip: inside the blocks only, an IPv4-mapped socket address as IPv4; no address known is refused", async () => {
    const resolver = new ApiKeyResolver(pool);
    const token = await attenuate(key, [{ type: "ip", cidrs: ["192.0.2.0/24", "2001:db8::/32"] }]);
    expect(await codeOf(resolver.resolve(token, { clientIp: "192.0.2.7" }))).toBe("ok");
    expect(await codeOf(resolver.resolve(token, { clientIp: "::ffff:192.0.2.7" }))).toBe("ok");
    expect(await codeOf(resolver.resolve(token, { clientIp: "2001:db8::1" }))).toBe("ok");
    expect(await codeOf(resolver.resolve(token, { clientIp: "198.51.100.1" }))).toBe("forbidden");
    expect(await codeOf(resolver.resolve(token))).toBe("forbidden");
  });

  it("revoking the root drops its cached tokens: the next resolve is 401", async () => {
    const resolver = new ApiKeyResolver(pool);
    const made = await createKey(pool, { workspace });
    const token = await attenuate(made.key, [{ type: "read_only" }]);
    expect(await codeOf(resolver.resolve(token))).toBe("ok");
    await revokeKey(pool, made.id, async (hash) => resolver.forget(hash));
    expect(await codeOf(resolver.resolve(token))).toBe("invalid_token");
    expect(await codeOf(resolver.resolve(made.key))).toBe("invalid_token");
    expect(hashKey(made.key)).toHaveLength(64);
  });

  it("the first verification anywhere is audited once (key.attenuate: the key by id and start, the caveats, never the token)", async () => {
    const made = await createKey(pool, { workspace });
    const token = await attenuate(made.key, [{ type: "group", group: "app" }, { type: "read_only" }]);
    // Two processes' resolvers, each verifying twice (a cache miss each time: ttl 0).
    const one = new ApiKeyResolver(pool, { ttlMs: 0 });
    const two = new ApiKeyResolver(pool, { ttlMs: 0 });
    await Promise.all([one.resolve(token), two.resolve(token)]);
    await Promise.all([one.resolve(token), two.resolve(token)]);
    const { rows } = await pool.query(
      "SELECT actor, action, target, detail FROM audit WHERE workspace_id = $1 AND action = 'key.attenuate' AND target = $2",
      [workspace, made.id],
    );
    expect(rows).toEqual([
      {
        actor: `key:${made.id}`,
        action: "key.attenuate",
        target: made.id,
        detail: { start: keyStart(made.key), caveats: ["group=app", "read_only"] },
      },
    ]);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(rows)).not.toContain(made.key);
    // Another token of the key is another entry; a refused one (tampered) none.
    await one.resolve(await attenuate(made.key, [{ type: "read_only" }]));
    await expect(one.resolve(`${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`)).rejects.toThrow();
    const count = await pool.query(
      "SELECT count(*)::int AS n FROM audit WHERE action = 'key.attenuate' AND target = $1",
      [made.id],
    );
    expect(count.rows[0].n).toBe(2);
  });
});
