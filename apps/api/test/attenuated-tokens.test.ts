// Offline attenuation over REST (issue 41, item 3): a `pa_` token made from a key without any
// call answers as the key narrowed by every caveat — group, tools, read-only, expiry, client
// address — each refusal next to the rightful call on the same object; a caveat cannot widen the
// key; a tampered chain, and every token of a revoked key, answer 401 `invalid_token`.
import { createKey, createWorkspace, hashKey, revokeKey } from "@prim/db";
import { PrimClient, PrimError, attenuate as sdkAttenuate } from "@prim/sdk";
import { runPrimCommand } from "@prim/testkit";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { attenuate, type Caveat } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cloud: TestCloud;
let key: string; // the workspace key
let workspace: string;
let appKv: string;
let opsKv: string;
let appGroupId: string;

const kv = (id: string, name = "k") => `/v1/primitives/${id}/keys/${name}`;

beforeAll(async () => {
  cloud = await startCloud("attenuate");
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "Acme", plan: "pro" });
  key = ws.key;
  workspace = ws.workspace.id;
  appGroupId = (await call(cloud.url, key, "POST", "/v1/groups", { name: "app" })).body.id;
  await call(cloud.url, key, "POST", "/v1/groups", { name: "ops" });
  appKv = (await call(cloud.url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body.id;
  opsKv = (await call(cloud.url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "ops" })).body.id;
  for (const id of [appKv, opsKv]) expect((await call(cloud.url, key, "PUT", kv(id), { value: 1 })).status).toBe(200);
}, 60_000);
afterAll(() => cloud?.stop());

describe("each caveat narrows, and the rightful call still succeeds", () => {
  it("group: the named group only (by name or id); the other group's kv is 404, account routes 403", async () => {
    for (const group of ["app", appGroupId]) {
      const token = await attenuate(key, [{ type: "group", group }]);
      expect((await call(cloud.url, token, "GET", kv(appKv))).status).toBe(200);
      expect((await call(cloud.url, token, "GET", kv(opsKv))).body.error.code).toBe("not_found");
      expect((await call(cloud.url, token, "POST", "/v1/groups", { name: "more" })).body.error.code).toBe("forbidden");
    }
  });

  it("tools: only the listed tools", async () => {
    const token = await attenuate(key, [{ type: "tools", tools: ["kv_get"] }]);
    expect((await call(cloud.url, token, "GET", kv(appKv))).status).toBe(200);
    expect((await call(cloud.url, token, "GET", "/v1/whoami")).body).toMatchObject({ kind: "scoped", group: null });
    const set = await call(cloud.url, token, "PUT", kv(appKv), { value: 2 });
    expect(set.body.error.code).toBe("tool_not_allowed");
    expect((await call(cloud.url, key, "PUT", kv(appKv), { value: 2 })).status).toBe(200);
  });

  it("read_only: reads answer, writes are 403 forbidden and change nothing", async () => {
    const token = await attenuate(key, [{ type: "read_only" }]);
    expect((await call(cloud.url, token, "PUT", kv(appKv, "ro"), { value: 1 })).body.error.code).toBe("forbidden");
    expect((await call(cloud.url, token, "GET", kv(appKv, "ro"))).status).toBe(404);
    expect((await call(cloud.url, key, "PUT", kv(appKv, "ro"), { value: 1 })).status).toBe(200);
    expect((await call(cloud.url, token, "GET", kv(appKv, "ro"))).status).toBe(200);
  });

  it("expires: a past instant is 401 invalid_token, a future one answers", async () => {
    const past = await attenuate(key, [{ type: "expires", at: Date.now() - 1 }]);
    const future = await attenuate(key, [{ type: "expires", at: Date.now() + 3_600_000 }]);
    expect((await call(cloud.url, past, "GET", kv(appKv))).body.error.code).toBe("invalid_token");
    expect((await call(cloud.url, future, "GET", kv(appKv))).status).toBe(200);
    // Narrowing a token never lengthens it: the earliest expiry holds.
    const later = await attenuate(past, [{ type: "expires", at: Date.now() + 3_600_000 }]);
    expect((await call(cloud.url, later, "GET", kv(appKv))).status).toBe(401);
  });

  it("ip: a caller outside the blocks is 403 forbidden; from inside it answers", async () => {
    const outside = await attenuate(key, [{ type: "ip", cidrs: ["10.0.0.0/8"] }]);
    const inside = await attenuate(key, [{ type: "ip", cidrs: ["10.0.0.0/8", "127.0.0.0/8", "::1"] }]);
    expect((await call(cloud.url, outside, "GET", kv(appKv))).body.error.code).toBe("forbidden");
    expect((await call(cloud.url, inside, "GET", kv(appKv))).status).toBe(200);
    // Two ip caveats: both must hold.
    const both = await attenuate(inside, [{ type: "ip", cidrs: ["10.0.0.0/8"] }]);
    expect((await call(cloud.url, both, "GET", kv(appKv))).body.error.code).toBe("forbidden");
  });
});

describe("a caveat cannot widen its key", () => {
  it("a token keeps its key's own expiry and IP allowlist (no caveat needed); the key's sibling without them answers", async () => {
    const pool = cloud.api.hub.pool;
    const walled = await createKey(pool, { workspace, group: "app", ipAllow: ["10.0.0.0/8"] });
    const fromWalled = await attenuate(walled.key, [{ type: "read_only" }]);
    const refused = await call(cloud.url, fromWalled, "GET", kv(appKv));
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 403, code: "forbidden" });
    const expiring = await createKey(pool, { workspace, group: "app", expiresAt: Date.now() + 3_600_000 });
    const fromExpiring = await attenuate(expiring.key, [{ type: "read_only" }]);
    expect((await call(cloud.url, fromExpiring, "GET", kv(appKv))).status).toBe(200);
    // The key expires (its row says so; a fresh token is verified from it): so do its tokens.
    await pool.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [expiring.id]);
    const later = await attenuate(expiring.key, [{ type: "tools", tools: ["kv_get"] }]);
    expect((await call(cloud.url, later, "GET", kv(appKv))).status).toBe(401);
    const open = await attenuate((await createKey(pool, { workspace, group: "app" })).key, [{ type: "read_only" }]);
    expect((await call(cloud.url, open, "GET", kv(appKv))).status).toBe(200);
  });

  it("a pa_ token cannot mint, list or revoke keys (a child would drop its caveats); the key itself mints", async () => {
    const scoped = await createKey(cloud.api.hub.pool, { workspace, group: "app", tools: ["kv_*", "key_*"] });
    const token = await attenuate(scoped.key, [{ type: "expires", at: Date.now() + 3_600_000 }, { type: "read_only" }]);
    const minted = await call(cloud.url, token, "POST", "/v1/keys", { name: "child" });
    expect({ status: minted.status, code: minted.body.error?.code }).toEqual({ status: 403, code: "forbidden" });
    expect(minted.body.error.message).toContain("attenuated");
    expect((await call(cloud.url, token, "GET", "/v1/keys")).status).toBe(403);
    expect((await call(cloud.url, token, "DELETE", "/v1/keys/key_00000000000000000000000000")).status).toBe(403);
    const own = await call(cloud.url, scoped.key, "POST", "/v1/keys", { name: "child", read_only: true });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expect((await call(cloud.url, scoped.key, "GET", "/v1/keys")).body.data.map((k: { id: string }) => k.id)).toEqual([
      own.body.id,
    ]);
  });

  it("tools beyond a scoped key's allowlist yield only the intersection", async () => {
    const scoped = await createKey(cloud.api.hub.pool, { workspace, group: "app", tools: ["kv_get"] });
    const token = await attenuate(scoped.key, [{ type: "tools", tools: ["kv_*"] }]);
    expect((await call(cloud.url, token, "GET", kv(appKv))).status).toBe(200);
    expect((await call(cloud.url, token, "PUT", kv(appKv), { value: 3 })).body.error.code).toBe("tool_not_allowed");
  });

  it("a group outside a scoped key's group is 403 group_mismatch; its own group answers", async () => {
    const scoped = await createKey(cloud.api.hub.pool, { workspace, group: "app" });
    const other = await attenuate(scoped.key, [{ type: "group", group: "ops" }]);
    expect((await call(cloud.url, other, "GET", kv(opsKv))).body.error.code).toBe("group_mismatch");
    const own = await attenuate(scoped.key, [{ type: "group", group: "app" }]);
    expect((await call(cloud.url, own, "GET", kv(appKv))).status).toBe(200);
  });

  it("another workspace's group id is 403 group_mismatch, its kv 404; its own key still reads it", async () => {
    const other = await createWorkspace(cloud.api.hub.pool, { name: "Beta", plan: "pro" });
    const groupB = (await call(cloud.url, other.key, "POST", "/v1/groups", { name: "app" })).body.id;
    const kvB = (await call(cloud.url, other.key, "POST", "/v1/primitives", { name: "c", type: "kv", group: "app" }))
      .body.id;
    await call(cloud.url, other.key, "PUT", kv(kvB), { value: "b" });
    const crossed = await attenuate(key, [{ type: "group", group: groupB }]);
    expect((await call(cloud.url, crossed, "GET", kv(kvB))).body.error.code).toBe("group_mismatch");
    const mine = await attenuate(key, [{ type: "read_only" }]);
    expect((await call(cloud.url, mine, "GET", kv(kvB))).status).toBe(404);
    expect((await call(cloud.url, other.key, "GET", kv(kvB))).body.value).toBe("b");
  });

  it("a read-only key stays read-only under any caveats", async () => {
    const ro = await createKey(cloud.api.hub.pool, { workspace, readOnly: true });
    const token = await attenuate(ro.key, [{ type: "tools", tools: ["kv_set", "kv_get"] }]);
    expect((await call(cloud.url, token, "PUT", kv(appKv), { value: 4 })).body.error.code).toBe("forbidden");
    expect((await call(cloud.url, token, "GET", kv(appKv))).status).toBe(200);
  });
});

describe("the chain is checked against the key", () => {
  it("a tampered, reordered or truncated token is 401 invalid_token; the genuine one answers", async () => {
    const caveats: Caveat[] = [{ type: "group", group: "app" }, { type: "read_only" }];
    const token = await attenuate(key, caveats);
    const parts = token.split(".");
    const reordered = [parts[0], parts[2], parts[1], parts[3]].join(".");
    const dropped = [parts[0], parts[1], parts[3]].join(".");
    const changed = [parts[0], Buffer.from("group=ops").toString("base64url"), parts[2], parts[3]].join(".");
    for (const bad of [reordered, dropped, changed]) {
      const res = await call(cloud.url, bad, "GET", kv(appKv));
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("invalid_token");
    }
    expect((await call(cloud.url, token, "GET", kv(appKv))).status).toBe(200);
  });

  it("every token of a revoked key is 401 at once, even one already verified; another key's still answer", async () => {
    const pool = cloud.api.hub.pool;
    const doomed = await createKey(pool, { workspace });
    const kept = await createKey(pool, { workspace });
    const token = await attenuate(doomed.key, [{ type: "group", group: "app" }]);
    const deeper = await attenuate(token, [{ type: "read_only" }]);
    const keptToken = await attenuate(kept.key, [{ type: "group", group: "app" }]);
    for (const t of [token, deeper, keptToken]) expect((await call(cloud.url, t, "GET", kv(appKv))).status).toBe(200);
    await revokeKey(pool, doomed.id, async (hash) => {
      cloud.api.resolver.forget(hash);
      await cloud.api.revocations.publish(hash);
    });
    expect(hashKey(doomed.key)).toMatch(/^[0-9a-f]{64}$/);
    for (const t of [token, deeper])
      expect((await call(cloud.url, t, "GET", kv(appKv))).body.error.code).toBe("invalid_token");
    expect((await call(cloud.url, keptToken, "GET", kv(appKv))).status).toBe(200);
  });
});

describe("made by the SDK", () => {
  it("an agent's client with a token narrowed to kv_get on app reads, and its write throws tool_not_allowed", async () => {
    const token = await sdkAttenuate(key, [
      { type: "group", group: "app" },
      { type: "tools", tools: ["kv_get"] },
    ]);
    const agent = new PrimClient({ baseUrl: cloud.url, token });
    expect((await agent.kv(appKv).get("k")).key).toBe("k");
    const refused = await agent
      .kv(appKv)
      .set("k", 9)
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(PrimError);
    expect((refused as PrimError).code).toBe("tool_not_allowed");
  });
});

describe("made by the CLI", () => {
  it("prim key attenuate --group app --read-only: a token that reads app and writes nothing", async () => {
    const run = await runPrimCommand(["key", "attenuate", "--group", "app", "--read-only"], {
      ...process.env,
      PRIM_API_KEY: key,
    });
    expect(run.code).toBe(0);
    const token = run.stdout.trim();
    expect((await call(cloud.url, token, "GET", kv(appKv))).status).toBe(200);
    expect((await call(cloud.url, token, "PUT", kv(appKv), { value: 5 })).body.error.code).toBe("forbidden");
    expect((await call(cloud.url, token, "GET", kv(opsKv))).status).toBe(404);
  });
});
