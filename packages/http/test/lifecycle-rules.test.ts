import { existsSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_PRINCIPAL, type PrimitiveInfo, type Principal } from "@prim/engine";
import { startServer, type TestServerOptions } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { blobFiles, fetchBytes } from "./storage-helpers.js";

/** A server with groups `app` and `other`; requests with `Bearer scoped` run as a key of `app`. */
async function setup(options: TestServerOptions = {}) {
  let tools: string[] | null = null;
  let groupId = "";
  const s = await startServer({
    ...options,
    authenticate: (req) =>
      req.headers.authorization === "Bearer scoped"
        ? ({ kind: "scoped", workspace: "local", actor: "key:key_s", groupId, tools } satisfies Principal)
        : LOCAL_PRINCIPAL,
  });
  groupId = (await s.engine.invoke<{ id: string }>(LOCAL_PRINCIPAL, "group.create", null, { name: "app" })).id;
  await s.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "other" });
  const create = (type: string, name: string, group = "app") =>
    s.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, { name, type, group });
  const scoped = (method: string, path: string, body?: unknown) =>
    s.api(method, path, body, { authorization: "Bearer scoped" });
  return {
    ...s,
    create,
    scoped,
    as: (t: string[] | null) => {
      tools = t;
    },
  };
}

describe("snapshots", () => {
  it("lists newest first with paging; labels are unique per primitive; unknown snapshots are 404", async () => {
    const s = await setup();
    const kv = await s.create("kv", "cache");
    const base = `/v1/primitives/${kv.id}`;
    const ids: string[] = [];
    for (const name of ["a", undefined, "c"]) {
      s.clock.advance(1000);
      ids.push((await s.api("POST", `${base}/snapshots`, name === undefined ? {} : { name })).body.id);
    }
    const dup = await s.api("POST", `${base}/snapshots`, { name: "a" });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("already_exists");
    const page1 = await s.api("GET", `${base}/snapshots?limit=2`);
    expect(page1.body.data.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.data[1].name).toBeNull();
    const page2 = await s.api("GET", `${base}/snapshots?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: ids[0], name: "a" })], next_cursor: null });
    const missing = await s.api("POST", `${base}/restore`, { snapshot: "nope" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    // Another primitive's snapshot is not this one's.
    const other = await s.create("kv", "other");
    expect((await s.api("POST", `/v1/primitives/${other.id}/restore`, { snapshot: ids[0] })).status).toBe(404);
    expect((await s.api("POST", `${base}/snapshots`, { name: "Bad Label" })).status).toBe(400);
  });

  it("a db restore keeps branches; promoting one made before the restore needs force", async () => {
    const s = await setup();
    const db = await s.create("db", "main");
    const base = `/v1/primitives/${db.id}`;
    await s.api("POST", `${base}/query`, { sql: "CREATE TABLE t (x)" });
    await s.api("POST", `${base}/snapshots`, { name: "empty" });
    await s.api("POST", `${base}/branches`, { name: "b" });
    await s.api("POST", `${base}/query`, { sql: "INSERT INTO t VALUES (1)" });
    await s.api("POST", `${base}/restore`, { snapshot: "empty" });
    expect((await s.api("POST", `${base}/query`, { sql: "SELECT count(*) AS n FROM t" })).body.rows).toEqual([
      { n: 0 },
    ]);
    expect((await s.api("POST", `${base}/branches/b/promote`, {})).body.error.code).toBe("branch_conflict");
  });
});

describe("fork rules", () => {
  it("404 for a missing group, 409 for a name clash, scoped keys only into their own group", async () => {
    const s = await setup();
    const kv = await s.create("kv", "cache");
    const base = `/v1/primitives/${kv.id}`;
    const noGroup = await s.api("POST", `${base}/fork`, { group: "ghost" });
    expect(noGroup.status).toBe(404);
    expect(noGroup.body.error.code).toBe("not_found");
    const clash = await s.api("POST", `${base}/fork`, { name: "cache" });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe("already_exists");
    await s.create("kv", "taken", "other");
    expect((await s.api("POST", `${base}/fork`, { name: "taken", group: "other" })).status).toBe(409);
    // Nothing half-made is left behind by the refused forks.
    expect(
      (await s.api("GET", "/v1/primitives?type=kv")).body.data.map((p: { name: string }) => p.name).sort(),
    ).toEqual(["cache", "taken"]);
    s.as(["primitive_fork"]);
    const cross = await s.scoped("POST", `${base}/fork`, { group: "other" });
    expect(cross.status).toBe(403);
    expect(cross.body.error.code).toBe("group_mismatch");
    expect((await s.scoped("POST", `${base}/fork`, { name: "mine" })).status).toBe(201);
    s.as(["kv_*"]);
    expect((await s.scoped("POST", `${base}/fork`, {})).body.error.code).toBe("tool_not_allowed");
    expect((await s.scoped("POST", `${base}/snapshots`, {})).body.error.code).toBe("tool_not_allowed");
    s.as(["primitive_snapshot"]);
    expect((await s.scoped("POST", `${base}/snapshots`, {})).status).toBe(201);
  });

  it("a queue fork releases leases in the copy only", async () => {
    const s = await setup();
    const q = await s.create("queue", "jobs");
    const base = `/v1/primitives/${q.id}`;
    await s.api("POST", `${base}/queues/w/messages`, { body: 1 });
    const [job] = (await s.api("POST", `${base}/queues/w/receive`, {})).body.data;
    const fork = (await s.api("POST", `${base}/fork`, {})).body;
    const copy = await s.api("GET", `/v1/primitives/${fork.id}/queues/w/messages/${job.id}`);
    expect(copy.body).toMatchObject({ status: "ready", lease_expires_at: null });
    expect((await s.api("GET", `${base}/queues/w/messages/${job.id}`)).body.status).toBe("leased");
    const again = (await s.api("POST", `/v1/primitives/${fork.id}/queues/w/receive`, {})).body.data;
    expect(again.map((j: { id: string }) => j.id)).toEqual([job.id]);
    // The source's lease token means nothing in the copy.
    const foreign = await s.api("POST", `/v1/primitives/${fork.id}/queues/w/messages/${job.id}/ack`, {
      lease_token: job.lease_token,
    });
    expect([409, 410]).toContain(foreign.status);
  });

  it("a storage fork does not accept the source's signed URLs", async () => {
    const s = await setup();
    const st = await s.create("storage", "files");
    const base = `/v1/primitives/${st.id}`;
    await fetchBytes(`${s.url}${base}/objects/a.txt`, { method: "PUT", body: "hello" });
    const signed = (await s.api("POST", `${base}/presign`, { key: "a.txt" })).body.url as string;
    const fork = (await s.api("POST", `${base}/fork`, {})).body;
    expect((await fetchBytes(signed, { method: "GET" })).bytes.toString()).toBe("hello");
    // The URL names the source: once the source's object is gone it finds nothing, although the
    // fork still holds a copy — the fork never answers the source's URLs.
    await fetchBytes(`${s.url}${base}/objects/a.txt`, { method: "DELETE" });
    expect((await fetchBytes(`${s.url}/v1/primitives/${fork.id}/objects/a.txt`, { method: "GET" })).status).toBe(200);
    expect((await fetchBytes(signed, { method: "GET" })).status).toBe(404);
    expect(signed).not.toContain(fork.id);
  });

  it("fs and storage forks share blobs instead of copying them", async () => {
    const s = await setup();
    const st = await s.create("storage", "files");
    const fs = await s.create("fs", "tree");
    const big = "x".repeat(200_000);
    await fetchBytes(`${s.url}/v1/primitives/${st.id}/objects/big`, { method: "PUT", body: big });
    await fetchBytes(`${s.url}/v1/primitives/${fs.id}/files/big.txt`, { method: "PUT", body: `${big}y` });
    const blobs = blobFiles(s.dataDir).length;
    expect(blobs).toBe(2);
    await s.api("POST", `/v1/primitives/${st.id}/fork`, {});
    await s.api("POST", `/v1/primitives/${fs.id}/fork`, {});
    await s.api("POST", `/v1/primitives/${fs.id}/snapshots`, {});
    expect(blobFiles(s.dataDir).length).toBe(blobs);
  });
});

describe("pause and resume", () => {
  it("are account-only, persist across restarts, and refuse data routes with 423 while lifecycle routes work", async () => {
    const s = await setup();
    const kv = await s.create("kv", "cache");
    const base = `/v1/primitives/${kv.id}`;
    await s.api("PUT", `${base}/keys/a`, { value: 1 });
    s.as(null);
    const scoped = await s.scoped("POST", `${base}/pause`);
    expect(scoped.status).toBe(403);
    expect(scoped.body.error.code).toBe("forbidden");
    const paused = await s.api("POST", `${base}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ id: kv.id, paused: true });
    expect((await s.api("GET", `${base}/keys/a`)).status).toBe(423);
    expect((await s.api("PUT", `${base}/keys/b`, { value: 2 })).body.error.code).toBe("paused");
    expect((await s.api("GET", `${base}/export`)).status).toBe(423);
    expect((await s.api("GET", base)).body.paused).toBe(true);
    expect((await s.api("GET", `${base}/stats`)).body).toMatchObject({ paused: true, items: 1 });
    expect((await s.api("GET", "/v1/primitives")).status).toBe(200);
    expect((await s.api("POST", `${base}/snapshots`, { name: "p" })).status).toBe(201);
    expect((await s.api("POST", `${base}/restore`, { snapshot: "p" })).status).toBe(200);
    expect((await s.api("GET", `${base}/snapshots`)).status).toBe(200);
    expect((await s.api("POST", `${base}/fork`, { name: "f" })).status).toBe(201);
    expect((await s.api("GET", `${base}/audit`)).status).toBe(200);
    expect((await s.api("POST", `${base}/pause`)).body.paused).toBe(true);

    const { dataDir, clock } = s;
    await s.close();
    const again = await startServer({ dataDir, clock });
    expect((await again.api("GET", `${base}/keys/a`)).status).toBe(423);
    const resumed = await again.api("POST", `${base}/resume`);
    expect(resumed.body).toMatchObject({ id: kv.id, paused: false });
    expect((await again.api("GET", `${base}/keys/a`)).body.value).toBe(1);
  });
});

describe("delete", () => {
  it("deleting a primitive removes its file, snapshots and (after collection) its blobs", async () => {
    const s = await setup();
    const st = await s.create("storage", "files");
    const base = `/v1/primitives/${st.id}`;
    await fetchBytes(`${s.url}${base}/objects/big`, { method: "PUT", body: "z".repeat(100_000) });
    await s.api("POST", `${base}/snapshots`, {});
    expect(blobFiles(s.dataDir).length).toBe(1);
    // A snapshot keeps its blob even when the live object is gone.
    await fetchBytes(`${s.url}${base}/objects/big`, { method: "DELETE" });
    expect(await s.engine.services.blobCollector.collect(0)).toBe(0);
    expect(blobFiles(s.dataDir).length).toBe(1);
    expect((await s.api("DELETE", base)).status).toBe(204);
    expect(existsSync(join(s.dataDir, "primitives", `${st.id}.sqlite`))).toBe(false);
    expect(existsSync(join(s.dataDir, "snapshots", st.id))).toBe(false);
    expect(await s.engine.services.blobCollector.collect(0)).toBe(1);
    expect(blobFiles(s.dataDir)).toEqual([]);
  });

  it("deleting a group with force removes every primitive's files and snapshots", async () => {
    const s = await setup();
    const kv = await s.create("kv", "cache");
    const db = await s.create("db", "main");
    await s.api("POST", `/v1/primitives/${kv.id}/snapshots`, {});
    await s.api("POST", `/v1/primitives/${db.id}/query`, { sql: "CREATE TABLE t (x)" });
    await s.api("POST", `/v1/primitives/${db.id}/snapshots`, {});
    expect((await s.api("DELETE", "/v1/groups/app")).status).toBe(409);
    expect((await s.api("DELETE", "/v1/groups/app?force=true")).status).toBe(204);
    for (const id of [kv.id, db.id]) {
      expect(existsSync(join(s.dataDir, "primitives", `${id}.sqlite`))).toBe(false);
      expect(existsSync(join(s.dataDir, "snapshots", id))).toBe(false);
    }
  });
});
