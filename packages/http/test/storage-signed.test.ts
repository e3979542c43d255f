import { describe, expect, it } from "vitest";
import { type BytesResponse, fetchBytes, pattern, rawRequest, tmpFiles, withStorage } from "./storage-helpers.js";

const ROOT = "t";
const HOUR = 3600 * 1000;

/** A store on a server that needs a root token for its API (signed URLs need none). */
async function signedStore() {
  const server = await withStorage({ rootToken: ROOT });
  const call = (method: string, path: string, body?: unknown) => server.api(method, path, body, server.auth);
  const presign = async (body: Record<string, unknown>) => {
    const res = await call("POST", `${server.base}/presign`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { url: string; method: string; headers: Record<string, string>; expires_at: number };
  };
  /** A request to a signed URL: no Authorization header. */
  const signed = (url: string, method: string, headers: Record<string, string> = {}, body?: string | Buffer) =>
    fetchBytes(url, { method, headers, ...(body === undefined ? {} : { body }) });
  return { ...server, call, presign, signed };
}

function expectForbidden(res: BytesResponse): string {
  expect(res.status).toBe(403);
  expect(res.json.error.code).toBe("forbidden");
  return res.json.error.message;
}

describe("signed URLs: download", () => {
  it("downloads without Authorization where the API needs the root token", async () => {
    const { put, presign, signed, url, base, clock } = await signedStore();
    const bytes = pattern(40 * 1024);
    const { etag } = (await put("report.pdf", bytes, { "content-type": "application/pdf" })).json;
    expect((await fetchBytes(`${url}${base}/objects/report.pdf`, { method: "GET" })).status).toBe(401);
    const grant = await presign({ key: "report.pdf" });
    expect(Object.keys(grant).sort()).toEqual(["expires_at", "headers", "method", "url"]);
    expect(grant).toMatchObject({ method: "GET", headers: {}, expires_at: clock.now() + HOUR });
    expect(grant.url.startsWith(`${url}/v1/signed/`)).toBe(true);
    const res = await signed(grant.url, "GET");
    expect(res.status).toBe(200);
    expect(res.bytes.equals(bytes)).toBe(true);
    expect(res.headers.get("etag")).toBe(etag);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-length")).toBe(String(bytes.length));
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
  });

  it("supports Range, If-None-Match and HEAD", async () => {
    const { put, presign, signed } = await signedStore();
    const bytes = pattern(30 * 1024, 2);
    const { etag } = (await put("obj", bytes)).json;
    const { url } = await presign({ key: "obj", expires_in: "5m" });
    const part = await signed(url, "GET", { range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 100-199/${bytes.length}`);
    expect(part.bytes.equals(bytes.subarray(100, 200))).toBe(true);
    const past = await signed(url, "GET", { range: `bytes=${bytes.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
    expect((await signed(url, "GET", { range: "bytes=0-1,5-6" })).status).toBe(200);
    expect((await signed(url, "GET", { "if-none-match": etag })).status).toBe(304);
    expect((await signed(url, "GET", { "if-none-match": '"other"' })).status).toBe(200);
    const head = await signed(url, "HEAD");
    expect(head.status).toBe(200);
    expect(head.bytes.length).toBe(0);
    expect(head.headers.get("content-length")).toBe(String(bytes.length));
    expect(head.headers.get("etag")).toBe(etag);
  });

  it("answers 404 for a signed key with no object, and accepts requests from any site", async () => {
    const { put, presign, signed } = await signedStore();
    const { url } = await presign({ key: "later" });
    const missing = await signed(url, "GET");
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
    await put("later", "now here");
    const cross = await rawRequest(url, { method: "GET", headers: { origin: "https://elsewhere.example" } });
    expect(cross.status).toBe(200);
    expect(cross.body.toString()).toBe("now here");
  });

  it("ignores any Authorization header sent with a signed URL", async () => {
    const { put, presign, signed } = await signedStore();
    await put("obj", "content");
    const { url } = await presign({ key: "obj" });
    const res = await signed(url, "GET", { authorization: "Bearer wrong" });
    expect(res.status).toBe(200);
    expect(res.bytes.toString()).toBe("content");
  });

  it("serves a signed URL for any valid key, however long its token", async () => {
    // 1024 bytes of key, half of them quotes that the token's JSON escapes: a token of ~2.9k chars.
    const key = 'x"'.repeat(512);
    const { put, presign, signed } = await signedStore();
    expect((await put(encodeURIComponent(key), "quoted")).status).toBe(200);
    const { url } = await presign({ key });
    const res = await signed(url, "GET");
    expect(res.status, res.bytes.toString().slice(0, 200)).toBe(200);
    expect(res.bytes.toString()).toBe("quoted");
    const upload = await presign({
      key: "k".repeat(1024),
      method: "PUT",
      content_type: `text/plain; x=${"y".repeat(240)}`, // content types are capped at 255 characters
    });
    const up = await signed(upload.url, "PUT", upload.headers, "typed");
    expect(up.status, up.bytes.toString().slice(0, 200)).toBe(200);
  });
});

describe("signed URLs: upload", () => {
  it("uploads with the returned headers and stores the signed content type", async () => {
    const { presign, signed, get } = await signedStore();
    const grant = await presign({ key: "up/load.txt", method: "PUT", content_type: "text/plain", max_size: 100 });
    expect(grant.method).toBe("PUT");
    expect(grant.headers).toEqual({ "Content-Type": "text/plain" });
    const res = await signed(grant.url, "PUT", grant.headers, "uploaded!");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ key: "up/load.txt", size: 9, content_type: "text/plain" });
    const read = await get("up/load.txt");
    expect(read.bytes.toString()).toBe("uploaded!");
    expect(read.headers.get("content-type")).toBe("text/plain");
  });

  it("streams a blob-sized upload", async () => {
    const { presign, get } = await signedStore();
    const { url } = await presign({ key: "big", method: "PUT" });
    const chunks = [pattern(64 * 1024, 1), pattern(64 * 1024, 2), pattern(10, 3)];
    const res = await rawRequest(url, { method: "PUT", body: chunks });
    expect(res.status).toBe(200);
    expect((await get("big")).bytes.equals(Buffer.concat(chunks))).toBe(true);
  });

  it("refuses a content type other than the signed one with 403 and stores nothing", async () => {
    const { presign, signed, get } = await signedStore();
    const grant = await presign({ key: "typed", method: "PUT", content_type: "image/png" });
    expectForbidden(await signed(grant.url, "PUT", { "content-type": "text/html" }, "<script>"));
    expectForbidden(await rawRequest(grant.url, { method: "PUT", body: Buffer.from("x") }).then(asBytes));
    expect((await get("typed")).status).toBe(404);
  });

  it("refuses a body over max_size with 413, stores nothing and keeps the previous object", async () => {
    const { put, presign, signed, get, dataDir } = await signedStore();
    const { url } = await presign({ key: "capped", method: "PUT", max_size: 1000 });
    const declared = await signed(url, "PUT", {}, Buffer.alloc(1001));
    expect(declared.status).toBe(413);
    expect(declared.json.error.code).toBe("payload_too_large");
    expect((await get("capped")).status).toBe(404);
    // The same without Content-Length (chunked), past the inline size so a temp blob is begun.
    await put("capped", "previous");
    const big = await presign({ key: "capped", method: "PUT", max_size: 40 * 1024 });
    const chunked = await rawRequest(big.url, { method: "PUT", body: [pattern(30 * 1024), pattern(30 * 1024)] });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body.toString()).error.code).toBe("payload_too_large");
    expect((await get("capped")).bytes.toString()).toBe("previous");
    expect(tmpFiles(dataDir)).toEqual([]);
    // Exactly max_size is accepted.
    expect((await signed(url, "PUT", {}, Buffer.alloc(1000))).status).toBe(200);
  });

  it("makes an if_none_match URL create-only: 412 once the key exists", async () => {
    const { put, presign, signed, get } = await signedStore();
    await put("taken", "original");
    const grant = await presign({ key: "taken", method: "PUT", if_none_match: "*" });
    expect(grant.headers).toEqual({ "If-None-Match": "*" });
    const res = await signed(grant.url, "PUT", grant.headers, "overwrite");
    expect(res.status).toBe(412);
    expect(res.json.error.code).toBe("precondition_failed");
    expect((await get("taken")).bytes.toString()).toBe("original");
    const fresh = await presign({ key: "fresh", method: "PUT", if_none_match: "*" });
    expect((await signed(fresh.url, "PUT", fresh.headers, "one")).status).toBe(200);
    expect((await signed(fresh.url, "PUT", fresh.headers, "two")).status).toBe(412);
    expect((await get("fresh")).bytes.toString()).toBe("one");
  });
});

async function asBytes(res: { status: number; body: Buffer }): Promise<BytesResponse> {
  return { status: res.status, headers: new Headers(), bytes: res.body, json: JSON.parse(res.body.toString()) };
}

describe("signed URLs: refusals", () => {
  it("refuses expired, revoked, wrong-method and tampered URLs with one 403", async () => {
    const { put, presign, signed, call, base, clock } = await signedStore();
    await put("obj", "content");
    const messages = new Set<string>();
    const deny = (res: BytesResponse) => messages.add(expectForbidden(res));

    const short = await presign({ key: "obj", expires_in: "10s" });
    expect(short.expires_at).toBe(clock.now() + 10_000);
    clock.advance(9_999);
    expect((await signed(short.url, "GET")).status).toBe(200);
    clock.advance(1);
    deny(await signed(short.url, "GET"));
    expect((await signed(short.url, "HEAD")).status).toBe(403); // HEAD: no body to read the code from

    const get = await presign({ key: "obj" });
    const upload = await presign({ key: "obj", method: "PUT" });
    deny(await signed(get.url, "PUT", {}, "x"));
    deny(await signed(upload.url, "GET"));
    expect((await signed(upload.url, "HEAD")).status).toBe(403);

    const token = get.url.slice(get.url.lastIndexOf("/") + 1);
    const [payload, mac] = token.split(".") as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const prefix = get.url.slice(0, get.url.length - token.length);
    for (const bad of [
      `${flip(payload, 10)}.${mac}`,
      `${payload}.${flip(mac, 5)}`,
      `${payload}.${mac.slice(0, -4)}`,
      payload,
      "not-a-token",
    ]) {
      deny(await signed(prefix + bad, "GET"));
    }

    expect((await signed(get.url, "GET")).status).toBe(200);
    const revoked = await call("POST", `${base}/presign/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ epoch: 1 });
    deny(await signed(get.url, "GET"));
    deny(await signed(upload.url, "PUT", {}, "x"));
    expect((await call("POST", `${base}/presign/revoke`)).body).toEqual({ epoch: 2 });
    const after = await presign({ key: "obj" });
    expect((await signed(after.url, "GET")).bytes.toString()).toBe("content");

    expect([...messages]).toHaveLength(1);
  });

  it("refuses URLs of a deleted store and of a store moved to another group, with the same 403", async () => {
    const { put, presign, signed, call, store, base } = await signedStore();
    await put("obj", "content");
    const before = await presign({ key: "obj" });
    expect((await call("POST", "/v1/groups", { name: "other" })).status).toBe(201);
    const moved = await call("PATCH", `/v1/primitives/${store.id}`, { group: "other" });
    expect(moved.status).toBe(200);
    expect(moved.body.group).toBe("other");
    const movedMessage = expectForbidden(await signed(before.url, "GET"));
    const fresh = await presign({ key: "obj" });
    expect((await signed(fresh.url, "GET")).bytes.toString()).toBe("content");

    expect((await call("DELETE", `/v1/primitives/${store.id}`)).status).toBe(204);
    const deletedMessage = expectForbidden(await signed(fresh.url, "GET"));
    expect(deletedMessage).toBe(movedMessage);
    expect((await call("GET", `${base}/objects/obj`)).status).toBe(404);
    // And the same message as a forged token.
    expect(expectForbidden(await signed(`${fresh.url}x`, "GET"))).toBe(movedMessage);
  });

  it("keeps the URLs of a moved store invalid when it moves back", async () => {
    const { put, presign, signed, call, store } = await signedStore();
    await put("obj", "content");
    const before = await presign({ key: "obj" });
    await call("POST", "/v1/groups", { name: "other" });
    expect((await call("PATCH", `/v1/primitives/${store.id}`, { group: "other" })).status).toBe(200);
    expectForbidden(await signed(before.url, "GET"));
    expect((await call("PATCH", `/v1/primitives/${store.id}`, { group: "app" })).status).toBe(200);
    expectForbidden(await signed(before.url, "GET"));
  });

  it("refuses a token whose signature was re-encoded (last character changed, same decoded bytes)", async () => {
    const { put, presign, signed } = await signedStore();
    await put("obj", "content");
    const { url } = await presign({ key: "obj" });
    expect((await signed(url, "GET")).status).toBe(200);
    // The 43rd base64url character of a 32-byte MAC carries 4 bits; its 2 low bits are padding.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(url.slice(-1));
    const tampered = url.slice(0, -1) + alphabet[last | 1];
    expect(tampered).not.toBe(url);
    expectForbidden(await signed(tampered, "GET"));
  });

  it("answers 423 paused for a paused store, and works again on resume", async () => {
    const { put, presign, signed, engine, store } = await signedStore();
    await put("obj", "content");
    const get = await presign({ key: "obj" });
    const upload = await presign({ key: "obj", method: "PUT" });
    await engine.services.catalog.updatePrimitive(store.id, { paused: true });
    for (const res of [await signed(get.url, "GET"), await signed(upload.url, "PUT", {}, "new")]) {
      expect(res.status).toBe(423);
      expect(res.json.error.code).toBe("paused");
    }
    await engine.services.catalog.updatePrimitive(store.id, { paused: false });
    expect((await signed(get.url, "GET")).bytes.toString()).toBe("content");
  });
});

describe("signed URLs: presign validation and audit", () => {
  it("validates presign bodies", async () => {
    const { call, base, clock } = await signedStore();
    const presign = (body: unknown) => call("POST", `${base}/presign`, body);
    const week = await presign({ key: "a", expires_in: "7d" });
    expect(week.status).toBe(200);
    expect(week.body.expires_at).toBe(clock.now() + 7 * 24 * HOUR);
    for (const body of [
      { key: "a", expires_in: "8d" },
      { key: "a", expires_in: "169h" },
      { key: "a", expires_in: "soon" },
      { key: "a", content_type: "text/plain" },
      { key: "a", method: "GET", max_size: 10 },
      { key: "a", method: "GET", if_none_match: "*" },
      { key: "a", method: "PUT", if_none_match: "etag" },
      { key: "a", method: "DELETE" },
      { key: "a", method: "PUT", max_size: -1 },
      { key: "" },
      {},
    ]) {
      const res = await presign(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    const long = await presign({ key: "k".repeat(1025) });
    expect(long.status).toBe(413);
  });

  it("audits signed requests as actor signed-url on the store", async () => {
    const { put, presign, signed, engine, store } = await signedStore();
    await put("obj", "content");
    const { url } = await presign({ key: "obj" });
    expect((await signed(url, "GET")).status).toBe(200);
    await engine.services.audit.flush();
    const entries = await engine.services.catalog.listAudit({ limit: 10 });
    const entry = entries.find((e) => e.action === "storage.signed");
    expect(entry).toMatchObject({
      action: "storage.signed",
      primitive: "storage",
      primitive_id: store.id,
      instance: "files",
      group: "app",
      actor: "signed-url",
      target: "obj",
    });
  });
});

describe("signed URLs: content type limit", () => {
  it("refuses a signed content type over 255 characters with 400", async () => {
    const { call, base } = await signedStore();
    const res = await call("POST", `${base}/presign`, { key: "k", method: "PUT", content_type: "t".repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^content_type:/);
  });
});
