import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKey, createWorkspace, hashKey, revokeKey } from "@prim/db";
import { runPrimCommand } from "@prim/testkit";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cloud: TestCloud;
let keyA: string;
let keyB: string;
let wsA: string;
let wsB: string;

beforeAll(async () => {
  cloud = await startCloud("api");
  const pool = cloud.api.hub.pool;
  const a = await createWorkspace(pool, { name: "Acme", plan: "pro" });
  const b = await createWorkspace(pool, { name: "Beta" });
  keyA = a.key;
  keyB = b.key;
  wsA = a.workspace.id;
  wsB = b.workspace.id;
});
afterAll(() => cloud?.stop());

describe("workspace keys", () => {
  it("reach their workspace's data through /v1, and audit as key:<id>", async () => {
    expect((await call(cloud.url, keyA, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
    const kv = await call(cloud.url, keyA, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    expect(kv.status).toBe(201);
    // Made in A's workspace (the catalog's row), and nowhere else.
    const owner = await cloud.api.hub.pool.query("SELECT workspace_id FROM primitives WHERE id = $1", [kv.body.id]);
    expect(owner.rows).toEqual([{ workspace_id: wsA }]);
    expect((await call(cloud.url, keyA, "PUT", `/v1/primitives/${kv.body.id}/keys/k`, { value: 1 })).status).toBe(200);
    const got = await call(cloud.url, keyA, "GET", `/v1/primitives/${kv.body.id}/keys/k`);
    expect(got).toMatchObject({ status: 200, body: { key: "k", value: 1 } });
    const trail = await call(cloud.url, keyA, "GET", "/v1/audit?action=kv.set");
    expect(trail.body.data[0]).toMatchObject({ action: "kv.set", actor: expect.stringMatching(/^key:key_/) });
  });

  it("answer 401 invalid_token alike for none, malformed, unknown and po_ credentials; /health is open", async () => {
    for (const key of [null, "nope", `pk_${"1".repeat(32)}`, `po_${"a".repeat(40)}`]) {
      const res = await call(cloud.url, key, "GET", "/v1/groups");
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("invalid_token");
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="prim"');
    }
    expect((await call(cloud.url, null, "GET", "/health")).body).toMatchObject({ ok: true });
  });

  it("never reach another workspace: its ids answer 404 and its names are its own", async () => {
    const [kv] = (await call(cloud.url, keyA, "GET", "/v1/primitives")).body.data;
    const group = await call(cloud.url, keyA, "GET", "/v1/groups/app");
    expect((await call(cloud.url, keyB, "GET", `/v1/primitives/${kv.id}/keys/k`)).status).toBe(404);
    expect((await call(cloud.url, keyB, "GET", `/v1/primitives/${kv.id}`)).status).toBe(404);
    expect((await call(cloud.url, keyB, "GET", `/v1/groups/${group.body.id}`)).status).toBe(404);
    expect((await call(cloud.url, keyB, "GET", "/v1/groups/app")).status).toBe(404);
    expect((await call(cloud.url, keyB, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
    expect((await call(cloud.url, keyB, "GET", "/v1/primitives")).body.data).toEqual([]);
  });
});

describe("scoped keys", () => {
  it("keep to their group and tools (spec scoping rules)", async () => {
    const pool = cloud.api.hub.pool;
    await call(cloud.url, keyA, "POST", "/v1/groups", { name: "other" });
    const inOther = await call(cloud.url, keyA, "POST", "/v1/primitives", { name: "x", type: "kv", group: "other" });
    const reader = await createKey(pool, { workspace: wsA, group: "app", tools: ["kv_get"] });
    expect(reader).toMatchObject({ group: "app", tools: ["kv_get"], key: expect.stringMatching(/^pk_/) });
    const [kv] = (await call(cloud.url, keyA, "GET", "/v1/primitives?group=app")).body.data;
    expect((await call(cloud.url, reader.key, "GET", `/v1/primitives/${kv.id}/keys/k`)).status).toBe(200);
    const write = await call(cloud.url, reader.key, "PUT", `/v1/primitives/${kv.id}/keys/k`, { value: 2 });
    expect(write).toMatchObject({ status: 403, body: { error: { code: "tool_not_allowed" } } });
    expect((await call(cloud.url, reader.key, "POST", "/v1/groups", { name: "z" })).body.error.code).toBe("forbidden");
    expect((await call(cloud.url, reader.key, "GET", "/v1/groups/other")).body.error.code).toBe("group_mismatch");
    expect((await call(cloud.url, reader.key, "GET", `/v1/primitives/${inOther.body.id}/keys/k`)).status).toBe(404);
    const listed = await call(cloud.url, reader.key, "GET", "/v1/primitives");
    expect(listed.body.data.map((p: { group: string }) => p.group)).toEqual(["app"]);
  });
});

describe("prim whoami", () => {
  it("prints the key's workspace by name, with its id; --json has workspace_name", async () => {
    const config = mkdtempSync(join(tmpdir(), "prim-whoami-"));
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PRIM_")));
    const whoami = (key: string, ...args: string[]) =>
      runPrimCommand(["whoami", "--api", cloud.url, ...args], { ...clean, PRIM_CONFIG_DIR: config, PRIM_API_KEY: key });
    try {
      const text = await whoami(keyA);
      expect(text).toMatchObject({ code: 0, stderr: "" });
      expect(text.stdout.trim()).toBe(
        `${cloud.url}: workspace Acme (${wsA}), every group and tool (key from PRIM_API_KEY)`,
      );
      const reader = await createKey(cloud.api.hub.pool, { workspace: wsB, group: "app", tools: ["kv_get"] });
      expect((await whoami(reader.key)).stdout.trim()).toBe(
        `${cloud.url}: workspace Beta (${wsB}), group app, tools kv_get (key from PRIM_API_KEY)`,
      );
      const json = JSON.parse((await whoami(keyA, "--json")).stdout);
      expect(json).toMatchObject({ workspace: wsA, workspace_name: "Acme", kind: "workspace" });
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
  });
});

describe("revocation", () => {
  it("answers 401 on the very next request, in every process (Redis fan-out)", async () => {
    const pool = cloud.api.hub.pool;
    const key = await createKey(pool, { workspace: wsA });
    const other = await cloud.second();
    expect((await call(cloud.url, key.key, "GET", "/v1/groups")).status).toBe(200);
    expect((await call(other.url, key.key, "GET", "/v1/groups")).status).toBe(200); // cached there too
    const heard = new Promise<void>((resolve) => {
      const forget = other.api.resolver.forget.bind(other.api.resolver);
      other.api.resolver.forget = (hash) => {
        forget(hash);
        if (hash === hashKey(key.key)) resolve();
      };
    });
    // As a revoke inside an app process does: drop it here, then tell every other process.
    await revokeKey(pool, key.id, async (hash) => {
      cloud.api.resolver.forget(hash);
      await cloud.api.revocations.publish(hash);
    });
    expect((await call(cloud.url, key.key, "GET", "/v1/groups")).status).toBe(401);
    await heard;
    expect((await call(other.url, key.key, "GET", "/v1/groups")).status).toBe(401);
  });
});

describe("signed URLs in the cloud", () => {
  it("download and upload without a credential, routed to the workspace the token names", async () => {
    await call(cloud.url, keyA, "POST", "/v1/groups", { name: "files" });
    const store = await call(cloud.url, keyA, "POST", "/v1/primitives", { name: "s", type: "storage", group: "files" });
    const base = `/v1/primitives/${store.body.id}`;
    const put = await fetch(`${cloud.url}${base}/objects/hello.txt`, {
      method: "PUT",
      headers: { authorization: `Bearer ${keyA}`, "content-type": "text/plain" },
      body: "hi there",
    });
    expect(put.status).toBeLessThan(300);
    const get = await call(cloud.url, keyA, "POST", `${base}/presign`, { key: "hello.txt" });
    const down = await fetch(get.body.url);
    expect(down.status).toBe(200);
    expect(await down.text()).toBe("hi there");
    const up = await call(cloud.url, keyA, "POST", `${base}/presign`, {
      key: "up.txt",
      method: "PUT",
      content_type: "text/plain",
    });
    const uploaded = await fetch(up.body.url, {
      method: "PUT",
      headers: up.body.headers,
      body: "sent",
    });
    expect(uploaded.status).toBeLessThan(300);
    const read = await fetch(`${cloud.url}${base}/objects/up.txt`, { headers: { authorization: `Bearer ${keyA}` } });
    expect(await read.text()).toBe("sent");
  });

  it("answer 400 for a token that is not a token, 403 for a forged or re-addressed one", async () => {
    await call(cloud.url, keyA, "POST", "/v1/groups", { name: "tokens" });
    const store = (
      await call(cloud.url, keyA, "POST", "/v1/primitives", { name: "t", type: "storage", group: "tokens" })
    ).body;
    const object = await fetch(`${cloud.url}/v1/primitives/${store.id}/objects/hello.txt`, {
      method: "PUT",
      headers: { authorization: `Bearer ${keyA}`, "content-type": "text/plain" },
      body: "hi",
    });
    expect(object.status).toBeLessThan(300);
    const get = await call(cloud.url, keyA, "POST", `/v1/primitives/${store.id}/presign`, { key: "hello.txt" });
    const token: string = get.body.url.slice(get.body.url.indexOf("/v1/signed/") + "/v1/signed/".length);
    const [payload, mac] = token.split(".") as [string, string];
    for (const bad of ["not-a-token", payload, `${payload}.`]) {
      const res = await call(cloud.url, null, "GET", `/v1/signed/${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    // The same grant re-addressed to workspace B: the signature no longer holds.
    const grant = JSON.parse(Buffer.from(payload, "base64url").toString());
    expect(grant.w).toBe(wsA);
    const moved = Buffer.from(JSON.stringify({ ...grant, w: wsB })).toString("base64url");
    for (const bad of [`${moved}.${mac}`, `${payload}.${mac.slice(0, -2)}AA`]) {
      const res = await call(cloud.url, null, "GET", `/v1/signed/${bad}`);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    // The token as it was made still downloads.
    const untouched = await fetch(`${cloud.url}/v1/signed/${token}`);
    expect(untouched.status).toBe(200);
    expect(await untouched.text()).toBe("hi");
  });
});
