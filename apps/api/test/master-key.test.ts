import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorkspace, migrate } from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import { call } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiApp, createApiApp, readApiEnv } from "../src/index.js";

// PRIM_MASTER_KEY wraps the vault's data keys: no key file is written, the same key opens the
// vault after a restart, and another key refuses to start rather than fail every vault call.

const K1 = "11".repeat(32);
const K2 = "22".repeat(32);
const db = freshDatabase("master-key");
const dir = mkdtempSync(join(tmpdir(), "prim-master-"));

async function open(masterKey: string): Promise<{ api: ApiApp; url: string }> {
  const env = readApiEnv({
    DATABASE_URL: db.url,
    PRIM_DATA_DIR: join(dir, "data"),
    // The vault's key ring (data/keys.sqlite) is under test; where blobs go plays no part.
    PRIM_BLOBS: `local:${join(dir, "blobs")}`,
    PRIM_API_PORT: "0",
    PRIM_MASTER_KEY: masterKey,
  });
  const api = await createApiApp(env);
  return { api, url: await api.app.listen({ port: 0, host: "127.0.0.1" }) };
}

beforeAll(() => migrate({ databaseUrl: db.url }));
afterAll(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("PRIM_MASTER_KEY", () => {
  it("wraps the vault keys, survives a restart with the same key and refuses another", async () => {
    const first = await open(K1);
    const { api } = first;
    const { key } = await createWorkspace(api.hub.pool, { name: "Vaulted", plan: "pro" });
    await call(first.url, key, "POST", "/v1/groups", { name: "app" });
    await call(first.url, key, "POST", "/v1/groups", { name: "other" });
    const vault = await call(first.url, key, "POST", "/v1/primitives", { name: "v", type: "vault", group: "app" });
    const put = await call(first.url, key, "PUT", `/v1/primitives/${vault.body.id}/secrets/TOKEN`, {
      value: "s3cr3t-value-123",
    });
    expect(put.status).toBe(200);
    await api.close();
    expect(existsSync(join(dir, "data", "master.key"))).toBe(false);
    expect(readFileSync(join(dir, "data", "keys.sqlite")).includes(Buffer.from(K1, "hex"))).toBe(false);

    await expect(open(K2)).rejects.toThrow(/master key does not unwrap the vault keys/);

    const again = await open(K1);
    try {
      // Moving a vault re-encrypts every value under the new group's key: it must unwrap the old one.
      const moved = await call(again.url, key, "PATCH", `/v1/primitives/${vault.body.id}`, { group: "other" });
      expect(moved.status).toBe(200);
      const listed = await call(again.url, key, "GET", `/v1/primitives/${vault.body.id}/secrets`);
      expect(listed.body.data.map((s: { name: string }) => s.name)).toEqual(["TOKEN"]);
    } finally {
      await again.api.close();
    }
  }, 60_000);
});
