import type { StorageStore } from "@prim/engine";
import { describe, expect, it } from "vitest";
import { type BytesResponse, fetchBytes, pattern, rawRequest, tmpFiles, withStorage } from "./storage-helpers.js";

// Signed URLs with limits: max_uses (counted in the store's file), max_size and its alias
// max_bytes (checked while the body streams), content_type.

const ROOT = "t";

async function signedStore() {
  const server = await withStorage({ rootToken: ROOT });
  const call = (method: string, path: string, body?: unknown) => server.api(method, path, body, server.auth);
  const presign = async (body: Record<string, unknown>) => {
    const res = await call("POST", `${server.base}/presign`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { url: string; method: string; headers: Record<string, string>; expires_at: number };
  };
  const signed = (url: string, method: string, headers: Record<string, string> = {}, body?: string | Buffer) =>
    fetchBytes(url, { method, headers, ...(body === undefined ? {} : { body }) });
  /** Use-count rows kept in the store's file. */
  const useRows = () =>
    (server.engine.services.files.handle(server.store.id, "storage").store as StorageStore).signedUseRows();
  return { ...server, call, presign, signed, useRows };
}

function expectForbidden(res: BytesResponse): void {
  expect(res.status).toBe(403);
  expect(res.json.error).toEqual({ code: "forbidden", message: "this signed URL is not valid" });
}

describe("signed URLs: max_uses", () => {
  it("serves a GET URL with max_uses=3 three times, then answers 403; a URL without it goes on", async () => {
    const { put, presign, signed } = await signedStore();
    await put("obj", "content");
    const grant = await presign({ key: "obj", max_uses: 3 });
    expect(Object.keys(grant).sort()).toEqual(["expires_at", "headers", "max_uses", "method", "url"]);
    expect(grant).toMatchObject({ method: "GET", headers: {}, max_uses: 3 });
    for (let i = 0; i < 3; i++) {
      const res = await signed(grant.url, "GET");
      expect(res.status).toBe(200);
      expect(res.bytes.toString()).toBe("content");
    }
    expectForbidden(await signed(grant.url, "GET"));
    expect((await signed(grant.url, "HEAD")).status).toBe(403);
    // The same key through an unlimited URL (and a fresh limited one) still works.
    const unlimited = await presign({ key: "obj" });
    expect(Object.keys(unlimited).sort()).toEqual(["expires_at", "headers", "method", "url"]);
    for (let i = 0; i < 5; i++) expect((await signed(unlimited.url, "GET")).status).toBe(200);
    const again = await presign({ key: "obj", max_uses: 3 });
    expect(again.url).not.toBe(grant.url);
    expect((await signed(again.url, "GET")).bytes.toString()).toBe("content");
  });

  it("lets exactly max_uses of a concurrent burst through", async () => {
    const { put, presign, signed } = await signedStore();
    const bytes = pattern(40 * 1024); // a blob, streamed
    await put("burst", bytes);
    const { url } = await presign({ key: "burst", max_uses: 5 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => signed(url, "GET")));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(5);
    for (const r of ok) expect(r.bytes.equals(bytes)).toBe(true);
    for (const r of answers.filter((r) => r.status !== 200)) expectForbidden(r);
  });

  it("gives back the use of a PUT refused for size; the next valid PUT takes it; then 403", async () => {
    const { put, presign, signed, get } = await signedStore();
    await put("up", "previous");
    const grant = await presign({ key: "up", method: "PUT", max_uses: 1, max_size: 100, content_type: "text/plain" });
    expect(grant).toMatchObject({ method: "PUT", headers: { "Content-Type": "text/plain" }, max_uses: 1 });
    // Declared too large, streamed too large (chunked), wrong content type: none uses it up.
    const declared = await signed(grant.url, "PUT", grant.headers, Buffer.alloc(101));
    expect(declared.status).toBe(413);
    expect(declared.json.error.code).toBe("payload_too_large");
    const chunked = await rawRequest(grant.url, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: [Buffer.alloc(60), Buffer.alloc(60)],
    });
    expect(chunked.status).toBe(413);
    expectForbidden(await signed(grant.url, "PUT", { "content-type": "text/html" }, "<b>"));
    expect((await get("up")).bytes.toString()).toBe("previous");
    const ok = await signed(grant.url, "PUT", grant.headers, "x".repeat(100));
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ key: "up", size: 100, content_type: "text/plain" });
    expectForbidden(await signed(grant.url, "PUT", grant.headers, "again"));
    expect((await get("up")).bytes.toString()).toBe("x".repeat(100));
  });

  it("gives back uses of failed requests (404, 416, 412, 423); 200, 206, 304 and HEAD count", async () => {
    const { put, presign, signed, engine, store, call, base } = await signedStore();
    const later = await presign({ key: "later", max_uses: 1 });
    expect((await signed(later.url, "GET")).status).toBe(404);
    expect((await signed(later.url, "GET")).status).toBe(404);
    await put("later", "here now");
    expect((await signed(later.url, "GET")).bytes.toString()).toBe("here now");
    expectForbidden(await signed(later.url, "GET"));

    const { etag } = (await put("obj", "0123456789")).json;
    const counted = await presign({ key: "obj", max_uses: 4 });
    expect((await signed(counted.url, "GET", { range: "bytes=50-" })).status).toBe(416);
    await engine.services.catalog.updatePrimitive(store.id, { paused: true });
    expect((await signed(counted.url, "GET")).status).toBe(423);
    await engine.services.catalog.updatePrimitive(store.id, { paused: false });
    expect((await signed(counted.url, "GET", { range: "bytes=0-1" })).status).toBe(206);
    expect((await signed(counted.url, "GET", { "if-none-match": etag })).status).toBe(304);
    expect((await signed(counted.url, "HEAD")).status).toBe(200);
    expect((await signed(counted.url, "GET")).bytes.toString()).toBe("0123456789");
    expectForbidden(await signed(counted.url, "GET"));

    const createOnly = await presign({ key: "obj", method: "PUT", if_none_match: "*", max_uses: 1 });
    expect((await signed(createOnly.url, "PUT", createOnly.headers, "no")).status).toBe(412);
    expect((await call("DELETE", `${base}/objects/obj`)).status).toBe(204);
    expect((await signed(createOnly.url, "PUT", createOnly.headers, "yes")).status).toBe(200);
    expectForbidden(await signed(createOnly.url, "PUT", createOnly.headers, "no"));
  });

  it("keeps use counts only while their URLs live: expiry and revoke delete them", async () => {
    const { put, presign, signed, call, base, clock, useRows } = await signedStore();
    await put("obj", "content");
    const plain = await presign({ key: "obj" });
    expect((await signed(plain.url, "GET")).status).toBe(200);
    expect(useRows()).toBe(0); // URLs without max_uses keep nothing
    const short = await presign({ key: "obj", max_uses: 2, expires_in: "10s" });
    const long = await presign({ key: "obj", max_uses: 2, expires_in: "1h" });
    expect((await signed(short.url, "GET")).status).toBe(200);
    expect((await signed(long.url, "GET")).status).toBe(200);
    expect(useRows()).toBe(2);
    clock.advance(10_000);
    expectForbidden(await signed(short.url, "GET"));
    expect((await signed(long.url, "GET")).status).toBe(200); // its use sweeps the expired row
    expect(useRows()).toBe(1);
    expectForbidden(await signed(long.url, "GET"));
    expect((await call("POST", `${base}/presign/revoke`)).status).toBe(200);
    expect(useRows()).toBe(0);
    expectForbidden(await signed(long.url, "GET"));
    const fresh = await presign({ key: "obj", max_uses: 1 });
    expect((await signed(fresh.url, "GET")).bytes.toString()).toBe("content");
  });
});

describe("signed URLs: max_size while streaming, max_bytes", () => {
  it("answers 413 before the client has finished sending, storing nothing and keeping the previous object", async () => {
    const { put, presign, get, dataDir } = await signedStore();
    await put("capped", "previous");
    const { url } = await presign({ key: "capped", method: "PUT", max_size: 40 * 1024 });
    let answered: () => void = () => undefined;
    const response = new Promise<void>((done) => {
      answered = done;
    });
    // 60 KiB sent, then the body stays open until the answer arrives: a server that read the
    // whole body before checking its size would never answer.
    async function* body() {
      yield pattern(30 * 1024, 1);
      yield pattern(30 * 1024, 2);
      await response;
    }
    const res = await rawRequest(url, { method: "PUT", body: body() });
    answered();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body.toString()).error.code).toBe("payload_too_large");
    expect((await get("capped")).bytes.toString()).toBe("previous");
    expect(tmpFiles(dataDir)).toEqual([]);
    expect((await rawRequest(url, { method: "PUT", body: [pattern(40 * 1024, 3)] })).status).toBe(200);
  });

  it("takes max_bytes as another name for max_size", async () => {
    const { presign, signed, call, base, get } = await signedStore();
    const grant = await presign({ key: "b", method: "PUT", max_bytes: 10 });
    expect((await signed(grant.url, "PUT", {}, "x".repeat(11))).status).toBe(413);
    expect((await signed(grant.url, "PUT", {}, "x".repeat(10))).status).toBe(200);
    expect((await get("b")).bytes.toString()).toBe("x".repeat(10));
    const same = await presign({ key: "b", method: "PUT", max_bytes: 5, max_size: 5 });
    expect((await signed(same.url, "PUT", {}, "123456")).status).toBe(413);
    for (const body of [
      { key: "b", method: "PUT", max_bytes: 5, max_size: 6 },
      { key: "b", max_bytes: 5 },
      { key: "b", method: "PUT", max_bytes: -1 },
      { key: "b", max_uses: 0 },
      { key: "b", max_uses: 1_000_001 },
      { key: "b", max_uses: 1.5 },
      { key: "b", method: "PUT", max_uses: "3" },
    ]) {
      const res = await call("POST", `${base}/presign`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    expect((await call("POST", `${base}/presign`, { key: "b", max_uses: 1_000_000 })).status).toBe(200);
  });

  it("documents max_bytes and max_uses in the OpenAPI document", async () => {
    const { call } = await signedStore();
    const doc = (await call("GET", "/v1/openapi.json")).body;
    const op = doc.paths["/v1/primitives/{id}/presign"].post;
    const request = op.requestBody.content["application/json"].schema;
    expect(Object.keys(request.properties)).toEqual(
      expect.arrayContaining(["max_size", "max_bytes", "max_uses", "content_type", "if_none_match"]),
    );
    expect(request.properties.max_uses).toMatchObject({ type: "integer", minimum: 1, maximum: 1_000_000 });
    const answer = op.responses["200"].content["application/json"].schema;
    expect(answer.properties.max_uses).toMatchObject({ type: "integer" });
    expect(answer.required).not.toContain("max_uses");
  });
});

describe("signed URLs across a restore", () => {
  it("a restore ends every URL signed before it: one revoked since the snapshot and one used up stay refused", async () => {
    const { put, presign, signed, call, store, useRows } = await signedStore();
    await put("obj", "content");
    const revoked = await presign({ key: "obj" });
    const once = await presign({ key: "obj", max_uses: 1 });
    const snap = await call("POST", `/v1/primitives/${store.id}/snapshots`, {});
    expect(snap.status, JSON.stringify(snap.body)).toBe(201);
    expect((await signed(once.url, "GET")).status).toBe(200); // used up after the snapshot
    expectForbidden(await signed(once.url, "GET"));
    expect((await call("POST", `/v1/primitives/${store.id}/presign/revoke`)).status).toBe(200);
    expectForbidden(await signed(revoked.url, "GET"));
    const restored = await call("POST", `/v1/primitives/${store.id}/restore`, {
      snapshot: (snap.body as { id: string }).id,
    });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    // The snapshot's epoch and use counts came back with the file; neither URL works again.
    expectForbidden(await signed(revoked.url, "GET"));
    expectForbidden(await signed(once.url, "GET"));
    expect(useRows()).toBe(0);
    // A URL signed after the restore serves the restored object.
    const fresh = await presign({ key: "obj", max_uses: 1 });
    expect((await signed(fresh.url, "GET")).bytes.toString()).toBe("content");
  });
});
