import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { createS3Client } from "@prim/cells";
import { createWorkspace, migrate } from "@prim/db";
import { freshDatabase, runPrimCommand } from "@prim/testkit";
import { call, startS3, TEST_BUCKET } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiApp, createApiApp, readApiEnv } from "../src/index.js";

// A restart of the api keeps every acknowledged write, and `prim admin fsck` finds the catalog
// (Postgres), the files (PRIM_DATA_DIR) and the blobs (s3rver) in agreement — and names each
// kind of orphan, both ways, once they are made to disagree.

const db = freshDatabase("fsck");
const dir = mkdtempSync(join(tmpdir(), "prim-fsck-"));
let s3: Awaited<ReturnType<typeof startS3>>;
let workspace: string;
let key: string;

function env(): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    PRIM_DATA_DIR: join(dir, "data"),
    PRIM_BLOBS: "s3",
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: TEST_BUCKET,
    PRIM_API_PORT: "0",
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
  };
}

async function open(): Promise<{ api: ApiApp; url: string }> {
  const api = await createApiApp(readApiEnv(env()));
  return { api, url: await api.app.listen({ port: 0, host: "127.0.0.1" }) };
}

async function fsck(): Promise<{ code: number; report: any; stderr: string }> {
  const res = await runPrimCommand(["admin", "fsck", "--workspace", workspace, "--json"], { ...process.env, ...env() });
  return { code: res.code, report: res.stdout.trim() === "" ? null : JSON.parse(res.stdout), stderr: res.stderr };
}

beforeAll(async () => {
  s3 = await startS3();
  await migrate({ databaseUrl: db.url });
});
afterAll(async () => {
  await s3?.stop();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("restart and fsck", () => {
  it("keeps every acknowledged write across a restart; fsck finds everything in agreement, then every orphan", async () => {
    const first = await open();
    const created = await createWorkspace(first.api.hub.pool, { name: "Fsck", plan: "pro" });
    workspace = created.workspace.id;
    key = created.key;
    const req = (method: string, path: string, body?: unknown) => call(first.url, key, method, path, body);
    await req("POST", "/v1/groups", { name: "app" });
    const make = async (type: string) =>
      (await req("POST", "/v1/primitives", { name: type, type, group: "app" })).body.id;
    const [kv, store, files, queue] = [await make("kv"), await make("storage"), await make("fs"), await make("queue")];
    const big = randomBytes(200 * 1024);
    const put = async (path: string, body: Buffer | string) =>
      (
        await fetch(`${first.url}${path}`, {
          method: "PUT",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/octet-stream" },
          body,
        })
      ).status;
    for (let i = 0; i < 5; i++) {
      expect((await req("PUT", `/v1/primitives/${kv}/keys/k${i}`, { value: i })).status).toBe(200);
      expect(await put(`/v1/primitives/${store}/objects/o${i}.bin`, Buffer.concat([big, Buffer.from([i])]))).toBe(200);
      expect(
        await put(`/v1/primitives/${files}/files/f${i}.bin`, Buffer.concat([big, Buffer.from([i, i])])),
      ).toBeLessThan(300);
      expect((await req("POST", `/v1/primitives/${queue}/queues/q/messages`, { body: i })).status).toBe(201);
    }
    expect((await req("POST", `/v1/primitives/${store}/snapshots`, { name: "s1" })).status).toBe(201);
    expect((await req("DELETE", `/v1/primitives/${store}/objects/o0.bin`)).status).toBe(204);
    await first.api.close();

    const clean = await fsck();
    expect(clean.stderr).not.toMatch(/Error/);
    expect(clean.code).toBe(0);
    expect(clean.report).toMatchObject({
      workspace,
      ok: true,
      primitives: 4,
      snapshots: 1,
      missing_files: [],
      orphan_files: [],
      missing_snapshots: [],
      orphan_snapshots: [],
      blobs: { missing: [], orphans: [] },
    });
    // o0 is deleted but its blob is kept: the snapshot still names it.
    expect(clean.report.blobs.referenced).toBe(10);
    expect(clean.report.blobs.stored).toBe(10);

    const second = await open();
    const again = (path: string) => call(second.url, key, "GET", path);
    for (let i = 0; i < 5; i++) expect((await again(`/v1/primitives/${kv}/keys/k${i}`)).body.value).toBe(i);
    const object = await fetch(`${second.url}/v1/primitives/${store}/objects/o3.bin`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(Buffer.from(await object.arrayBuffer()).equals(Buffer.concat([big, Buffer.from([3])]))).toBe(true);
    expect((await again(`/v1/primitives/${queue}/queues`)).body.data).toEqual([
      expect.objectContaining({ name: "q", ready: 5 }),
    ]);
    expect((await again(`/v1/primitives/${files}/files/f4.bin?stat=1`)).body.size).toBe(big.length + 2);
    await second.api.close();

    // Make them disagree, each way: a blob gone and a stray one; a file gone and a stray one.
    const client = createS3Client({ endpoint: s3.endpoint, region: "us-east-1" });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: TEST_BUCKET, Prefix: `blobs/${workspace}/` }));
    const gone = listed.Contents?.[0]?.Key as string;
    await client.send(new DeleteObjectCommand({ Bucket: TEST_BUCKET, Key: gone }));
    const stray = "ab".repeat(32);
    await client.send(
      new PutObjectCommand({ Bucket: TEST_BUCKET, Key: `blobs/${workspace}/ab/${stray}`, Body: "stray" }),
    );
    rmSync(join(dir, "data", workspace, "primitives", `${kv}.sqlite`));
    writeFileSync(join(dir, "data", workspace, "primitives", "leftover.sqlite"), "");

    const dirty = await fsck();
    expect(dirty.code).toBe(1);
    expect(dirty.report).toMatchObject({
      ok: false,
      missing_files: [kv],
      orphan_files: ["leftover.sqlite"],
      blobs: { missing: [gone.slice(gone.lastIndexOf("/") + 1)], orphans: [stray] },
    });
  }, 120_000);

  it("names a workspace it does not know", async () => {
    const res = await runPrimCommand(["admin", "fsck", "--workspace", "ws_nope", "--json"], {
      ...process.env,
      ...env(),
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/workspace 'ws_nope'/);
  }, 60_000);
});
