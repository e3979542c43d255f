// Keys for agents (issue 41, item 1): a key's expiry and IP allowlist as the key resolver applies
// them (real Postgres; the resolver's clock moved, never slept), and the parsers the admin
// command and the dashboard share.
import {
  ApiKeyResolver,
  createKey,
  createWorkspace,
  ipAllowWithin,
  ipMatcher,
  listKeys,
  migrate,
  openPool,
  parseBudget,
  parseDuration,
  parseIpAllow,
} from "@prim/db";
import { ServiceError } from "@prim/engine";
import { freshDatabase } from "@prim/testkit";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const db = freshDatabase("keylimits");
let pool: pg.Pool;
let workspace: string;

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  pool = await openPool(db.url);
  workspace = (await createWorkspace(pool, { name: "Limits", plan: "pro" })).workspace.id;
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await db.drop();
});

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ServiceError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("key expiry", () => {
  it("happy: a key works until its expires_at, then answers 401 invalid_token, cached or not", async () => {
    const start = Date.now();
    let now = start;
    const resolver = new ApiKeyResolver(pool, { now: () => now, ttlMs: 3_600_000 });
    const key = await createKey(pool, { workspace, name: "hour", expiresAt: start + 3_600_000 });
    expect(key.expires_at).toBe(start + 3_600_000);
    expect((await resolver.resolve(key.key)).actor).toBe(`key:${key.id}`); // cached from here on
    now = start + 3_599_999;
    expect((await resolver.resolve(key.key)).actor).toBe(`key:${key.id}`);
    now = start + 3_600_000;
    // The cache entry is an hour's TTL: only the expiry check on the hit stops it.
    const cached = await refusal(resolver.resolve(key.key));
    expect(cached).toMatchObject({ code: "invalid_token" });
    expect(cached.message).toContain("expired");
    // A resolver that has never seen it reads Postgres and refuses the same way.
    const fresh = new ApiKeyResolver(pool, { now: () => now });
    expect(await refusal(fresh.resolve(key.key))).toMatchObject({ code: "invalid_token" });
    // A key without expiry, same clock: still good.
    const forever = await createKey(pool, { workspace, name: "forever" });
    expect(forever.expires_at).toBeNull();
    expect((await fresh.resolve(forever.key)).actor).toBe(`key:${forever.id}`);
  });

  it("error: an expiry already past, or not a time, is refused at creation", async () => {
    expect(await refusal(createKey(pool, { workspace, expiresAt: Date.now() - 1 }))).toMatchObject({
      code: "invalid_request",
    });
    expect(await refusal(createKey(pool, { workspace, expiresAt: 1.5 }))).toMatchObject({ code: "invalid_request" });
  });
});

describe("key IP allowlist", () => {
  it("security: only client addresses inside a CIDR pass (IPv4, IPv6, IPv4-mapped); others get 403", async () => {
    const resolver = new ApiKeyResolver(pool);
    const key = await createKey(pool, { workspace, ipAllow: ["10.0.0.0/8", "2001:db8::/32", "127.0.0.1"] });
    expect(key.ip_allow).toEqual(["10.0.0.0/8", "2001:db8::/32", "127.0.0.1/32"]);
    for (const ip of ["10.1.2.3", "2001:db8:ffff::1", "::ffff:10.9.9.9", "127.0.0.1", "::ffff:127.0.0.1"]) {
      expect((await resolver.resolve(key.key, { clientIp: ip })).actor, ip).toBe(`key:${key.id}`);
    }
    for (const ip of ["11.0.0.1", "2001:db9::1", "::1", "127.0.0.2"]) {
      const refused = await refusal(resolver.resolve(key.key, { clientIp: ip }));
      expect(refused.code, ip).toBe("forbidden");
      expect(refused.message).toContain("IP allowlist");
    }
    // No address known: refused (fails closed), while a key without a list needs none.
    expect(await refusal(resolver.resolve(key.key))).toMatchObject({ code: "forbidden" });
    const open = await createKey(pool, { workspace });
    expect((await resolver.resolve(open.key)).actor).toBe(`key:${open.id}`);
  });

  it("error: malformed CIDRs and prefix lengths are refused at creation", async () => {
    for (const bad of [["10.0.0.0/33"], ["::1/129"], ["10.0.0/8"], ["example.com"], [], ["10.0.0.0/-1"]]) {
      expect(await refusal(createKey(pool, { workspace, ipAllow: bad })), JSON.stringify(bad)).toMatchObject({
        code: "invalid_request",
      });
    }
  });

  it("matches with node's BlockList, IPv6 included", () => {
    const allows = ipMatcher(parseIpAllow("10.0.0.0/8, ::1/128,192.168.1.0/24"));
    expect([allows("10.255.0.1"), allows("::1"), allows("192.168.1.200")]).toEqual([true, true, true]);
    expect([allows("192.168.2.1"), allows("::2"), allows("not an ip")]).toEqual([false, false, false]);
  });
});

describe("key budgets and listings", () => {
  it("parses N, N/day, N/month and durations; refuses the rest", () => {
    expect(parseBudget("1000")).toEqual({ total: 1000 });
    expect(parseBudget("1000/day")).toEqual({ per: "day", limit: 1000 });
    expect(parseBudget(" 5 / month ")).toEqual({ per: "month", limit: 5 });
    for (const bad of ["0", "-1", "1.5", "10/week", "", "abc"]) expect(() => parseBudget(bad), bad).toThrow();
    expect(parseDuration("1h")).toBe(3_600_000);
    expect(parseDuration("30")).toBe(30_000);
    expect(() => parseDuration("0s")).toThrow();
    expect(() => parseDuration("1y")).toThrow();
  });

  it("lists expiry, allowlist and budget; the principal carries the budget", async () => {
    const expiresAt = Date.now() + 86_400_000;
    const key = await createKey(pool, {
      workspace,
      name: "listed",
      expiresAt,
      ipAllow: ["::1/128"],
      budget: { per: "day", limit: 1000 },
    });
    expect(key).toMatchObject({ expires_at: expiresAt, ip_allow: ["::1/128"], budget: { per: "day", limit: 1000 } });
    const listed = (await listKeys(pool, workspace)).find((k) => k.id === key.id);
    expect(listed?.expires_at?.getTime()).toBe(expiresAt);
    expect(listed).toMatchObject({ ip_allow: ["::1/128"], budget: { per: "day", limit: 1000 } });
    const principal = await new ApiKeyResolver(pool).resolve(key.key, { clientIp: "::1" });
    expect(principal.budget).toEqual({ per: "day", limit: 1000 });
    expect(await refusal(createKey(pool, { workspace, budget: { total: 0 } }))).toMatchObject({
      code: "invalid_request",
    });
  });
});

describe("ipAllowWithin (a minted key's allowlist inside its parent's)", () => {
  it("holds a narrower block of the same family, and nothing wider, elsewhere or of the other family", () => {
    const parent = ["10.0.0.0/8", "2001:db8::/32"];
    expect(ipAllowWithin(parent, ["10.1.0.0/16", "10.1.2.3/32", "2001:db8:1::/48"])).toBe(true);
    expect(ipAllowWithin(parent, ["10.0.0.0/8"])).toBe(true);
    expect(ipAllowWithin(parent, ["10.0.0.0/7"])).toBe(false);
    expect(ipAllowWithin(parent, ["11.0.0.0/16"])).toBe(false);
    expect(ipAllowWithin(parent, ["::/0"])).toBe(false);
    expect(ipAllowWithin(["127.0.0.0/8"], ["::1/128"])).toBe(false);
  });
});
