import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { LOCAL_PRINCIPAL, type PrimitiveInfo, type Principal } from "@prim/engine";
import { startServer, type TestServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

/**
 * Group archives over real HTTP: `GET /v1/groups/{group}/export` (whole, and resumed with
 * `?archive=` and `Range`), `GET` and `POST /v1/groups/{group}/import` between two servers with
 * different transfer keys, `GET /v1/whoami`, and the errors' shape. The engine suite
 * (packages/engine/test/archive) checks the archive's contents type by type.
 */

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");
const BIG = Buffer.from(Array.from({ length: 300 * 1024 }, (_, i) => (i * 7) % 256));

interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

async function download(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<Download> {
  const res = await fetch(server.url + path, { headers: { ...server.auth, ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** POSTs raw bytes (an archive) and answers the JSON reply. */
async function post(server: TestServer, path: string, body: Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { ...server.auth, "content-type": "application/x-tar", ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Group `app` on `server`: a kv value, a secret, a small file and a blob-backed object. */
async function seed(server: TestServer) {
  const invoke = <T>(op: string, target: string | null, input: unknown) =>
    server.engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
  const create = (name: string, type: string) =>
    invoke<PrimitiveInfo>("primitive.create", null, { name, type, group: "app" });
  await invoke("group.create", null, { name: "app" });
  const kv = await create("cache", "kv");
  await invoke("kv.set", kv.id, { key: "greeting", value: { hello: "world" } });
  const vault = await create("secrets", "vault");
  await invoke("vault.put", vault.id, { name: "TOKEN", value: "tok_live_abcdef0123456789" });
  const fs = await create("files", "fs");
  await invoke("fs.write", fs.id, { path: "/notes/a.md", body: Readable.from([Buffer.from("# a\n")]) });
  const storage = await create("objects", "storage");
  await invoke("storage.put", storage.id, { key: "big.bin", body: Readable.from([BIG]), content_type: "image/png" });
  return { kv, vault, fs, storage };
}

function expectError(res: { status: number; headers: Headers; body: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
  expect(res.headers.get("x-request-id")).toMatch(/\S/);
}

describe("GET /v1/groups/{group}/export", () => {
  it("downloads the archive with its id, sha256, size and expiry in headers", async () => {
    const a = await startServer();
    await seed(a);
    const res = await download(a, "/v1/groups/app/export");
    expect(res.status).toBe(200);
    const sha = res.headers.get("x-prim-archive-sha256");
    expect(sha).toBe(sha256(res.bytes));
    expect(res.headers.get("etag")).toBe(`"${sha}"`);
    expect(res.headers.get("x-prim-archive-id")).toMatch(/^arc_[0-9a-z]{26}$/);
    expect(res.headers.get("x-prim-archive-size")).toBe(String(res.bytes.length));
    expect(res.headers.get("content-length")).toBe(String(res.bytes.length));
    expect(res.headers.get("x-prim-archive-expires")).toBe(String(a.clock.now() + 60 * 60 * 1000));
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("content-type")).toBe("application/x-tar");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="app.prim.tar"');
    // A ustar file: "ustar" at offset 257 of its first header, two zero blocks at the end.
    expect(res.bytes.subarray(257, 262).toString()).toBe("ustar");
    expect(res.bytes.subarray(-1024).every((b) => b === 0)).toBe(true);
    expect(res.bytes.length % 512).toBe(0);
  });

  it("resumes a download from a byte with ?archive= and Range (206); the parts hash to the whole", async () => {
    const a = await startServer();
    await seed(a);
    const whole = await download(a, "/v1/groups/app/export");
    const id = whole.headers.get("x-prim-archive-id") as string;
    const sha = whole.headers.get("x-prim-archive-sha256") as string;
    const size = whole.bytes.length;
    const cut = Math.floor(size / 3) + 5;
    const rest = await download(a, `/v1/groups/app/export?archive=${id}`, { range: `bytes=${cut}-` });
    expect(rest.status).toBe(206);
    expect(rest.headers.get("content-range")).toBe(`bytes ${cut}-${size - 1}/${size}`);
    expect(rest.headers.get("content-length")).toBe(String(size - cut));
    expect(rest.headers.get("x-prim-archive-id")).toBe(id);
    expect(rest.headers.get("etag")).toBe(`"${sha}"`);
    expect(sha256(Buffer.concat([whole.bytes.subarray(0, cut), rest.bytes]))).toBe(sha);
    // A bounded range, and the same archive whole again by id.
    const middle = await download(a, `/v1/groups/app/export?archive=${id}`, { range: "bytes=512-1023" });
    expect(middle.status).toBe(206);
    expect(middle.bytes.equals(whole.bytes.subarray(512, 1024))).toBe(true);
    const again = await download(a, `/v1/groups/app/export?archive=${id}`);
    expect(again.status).toBe(200);
    expect(again.bytes.equals(whole.bytes)).toBe(true);
  });

  it("answers 416 range_not_satisfiable with bytes */size for a start at or past the end", async () => {
    const a = await startServer();
    await seed(a);
    const whole = await download(a, "/v1/groups/app/export");
    const id = whole.headers.get("x-prim-archive-id") as string;
    const size = whole.bytes.length;
    for (const range of [`bytes=${size}-`, `bytes=${size + 1000}-`]) {
      const res = await a.api("GET", `/v1/groups/app/export?archive=${id}`, undefined, { range });
      expectError(res, 416, "range_not_satisfiable");
      expect(res.headers.get("content-range")).toBe(`bytes */${size}`);
    }
  });

  it("answers 404 for another group's archive, an unknown archive and an unknown group; 400 for bad input", async () => {
    const a = await startServer();
    await seed(a);
    await a.api("POST", "/v1/groups", { name: "other" });
    const other = await download(a, "/v1/groups/other/export");
    const otherId = other.headers.get("x-prim-archive-id") as string;
    expectError(await a.api("GET", `/v1/groups/app/export?archive=${otherId}`), 404, "not_found");
    expectError(await a.api("GET", `/v1/groups/app/export?archive=arc_${"0".repeat(26)}`), 404, "not_found");
    expectError(await a.api("GET", "/v1/groups/nope/export"), 404, "not_found");
    expectError(await a.api("GET", "/v1/groups/app/export?recipient=short"), 400, "invalid_request");
    expectError(await a.api("GET", "/v1/groups/app/export?archive=../../x"), 400, "invalid_request");
  });
});

describe("GET and POST /v1/groups/{group}/import", () => {
  it("moves a group to another server: export for its recipient, POST the file, 201 with the data there", async () => {
    const a = await startServer();
    const b = await startServer();
    const src = await seed(a);
    const status = await b.api("GET", "/v1/groups/app/import");
    expect(status.status).toBe(200);
    expect(status.body).toEqual({ recipient: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), upload: null });
    const { recipient } = status.body as { recipient: string };
    expect((await a.api("GET", "/v1/groups/app/import")).body.recipient).not.toBe(recipient);

    const archive = await download(a, `/v1/groups/app/export?recipient=${recipient}`);
    expect(archive.status).toBe(200);
    const sha = archive.headers.get("x-prim-archive-sha256") as string;
    const res = await post(b, `/v1/groups/app/import?sha256=${sha}`, archive.bytes);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ sha256: sha, bytes: archive.bytes.length, group: { name: "app" } });
    const imported = res.body.imported as { id: string; type: string; name: string; source_id: string }[];
    expect(imported.map((p) => [p.type, p.name, p.source_id])).toEqual([
      ["kv", "cache", src.kv.id],
      ["vault", "secrets", src.vault.id],
      ["fs", "files", src.fs.id],
      ["storage", "objects", src.storage.id],
    ]);
    const idOf = (type: string) => imported.find((p) => p.type === type)?.id as string;
    expect(idOf("kv")).not.toBe(src.kv.id);

    const primitive = await b.api("GET", `/v1/primitives/${idOf("kv")}`);
    expect(primitive.body.forked_from).toEqual({
      id: src.kv.id,
      name: "cache",
      type: "kv",
      group: "app",
      snapshot: null,
    });
    expect((await b.api("GET", `/v1/primitives/${idOf("kv")}/keys/greeting`)).body).toMatchObject({
      value: { hello: "world" },
    });
    const file = await fetch(`${b.url}/v1/primitives/${idOf("fs")}/files/notes/a.md`);
    expect(await file.text()).toBe("# a\n");
    const object = await download(b, `/v1/primitives/${idOf("storage")}/objects/big.bin`);
    expect(object.status).toBe(200);
    expect(object.headers.get("content-type")).toBe("image/png");
    expect(object.bytes.equals(BIG)).toBe(true);
    const secrets = await b.api("GET", `/v1/primitives/${idOf("vault")}/secrets`);
    expect(secrets.body.data).toEqual([expect.objectContaining({ name: "TOKEN", version: 1 })]);

    // The upload is gone once imported.
    expect((await b.api("GET", `/v1/groups/app/import?sha256=${sha}`)).body).toEqual({
      recipient,
      upload: { sha256: sha, received: 0 },
    });
  });

  it("refuses a non-empty group without replace=true (409), and replaces with it (201)", async () => {
    const a = await startServer();
    const b = await startServer();
    const src = await seed(a);
    await b.api("POST", "/v1/groups", { name: "app" });
    const mine = (await b.api("POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body;
    await b.api("PUT", `/v1/primitives/${mine.id}/keys/greeting`, { value: "old" });
    const { recipient } = (await b.api("GET", "/v1/groups/app/import")).body;
    const archive = await download(a, `/v1/groups/app/export?recipient=${recipient}`);
    const sha = archive.headers.get("x-prim-archive-sha256") as string;

    expectError(await post(b, `/v1/groups/app/import?sha256=${sha}`, archive.bytes), 409, "conflict");
    const res = await post(b, `/v1/groups/app/import?sha256=${sha}&replace=true`, archive.bytes);
    expect(res.status).toBe(201);
    const cache = res.body.imported.find((p: { type: string }) => p.type === "kv");
    expect(cache).toMatchObject({ id: mine.id, source_id: src.kv.id, replaced: { snapshot: expect.any(String) } });
    expect((await b.api("GET", `/v1/primitives/${mine.id}/keys/greeting`)).body.value).toEqual({ hello: "world" });
    const restored = await b.api("POST", `/v1/primitives/${mine.id}/restore`, { snapshot: cache.replaced.snapshot });
    expect(restored.status).toBe(200);
    expect((await b.api("GET", `/v1/primitives/${mine.id}/keys/greeting`)).body.value).toBe("old");
  });

  it("refuses an archive sealed for another engine, a wrong sha256 and a damaged body (400), a wrong offset (409)", async () => {
    const a = await startServer();
    const b = await startServer();
    await seed(a);
    const own = await download(a, "/v1/groups/app/export"); // sealed for A
    const ownSha = own.headers.get("x-prim-archive-sha256") as string;
    expectError(await post(b, `/v1/groups/app/import?sha256=${ownSha}`, own.bytes), 400, "invalid_request");

    const { recipient } = (await b.api("GET", "/v1/groups/app/import")).body;
    const archive = await download(a, `/v1/groups/app/export?recipient=${recipient}`);
    const sha = archive.headers.get("x-prim-archive-sha256") as string;
    expectError(
      await post(b, `/v1/groups/app/import?sha256=${sha256("other")}`, archive.bytes),
      400,
      "invalid_request",
    );
    const damaged = Buffer.from(archive.bytes);
    const blobAt = damaged.indexOf(BIG.subarray(0, 64)); // inside the object's blob entry
    expect(blobAt).toBeGreaterThan(0);
    damaged.writeUInt8(damaged.readUInt8(blobAt + 1000) ^ 0xff, blobAt + 1000);
    const refused = await post(b, `/v1/groups/app/import?sha256=${sha256(damaged)}`, damaged);
    expectError(refused, 400, "invalid_request");
    expect(refused.body.error.message).toMatch(/^archive is corrupt: /);
    expectError(
      await post(b, `/v1/groups/app/import?sha256=${sha}&offset=512`, archive.bytes.subarray(512)),
      409,
      "conflict",
    );
    expectError(await post(b, "/v1/groups/app/import?sha256=nothex", archive.bytes), 400, "invalid_request");
    // Nothing of any of them stayed.
    expectError(await b.api("GET", "/v1/groups/app"), 404, "not_found");
    expect((await b.api("GET", `/v1/groups/app/import?sha256=${sha}`)).body.upload).toEqual({
      sha256: sha,
      received: 0,
    });
    // The intact archive still imports.
    expect((await post(b, `/v1/groups/app/import?sha256=${sha}`, archive.bytes)).status).toBe(201);
  });
});

describe("access", () => {
  it("GET /v1/whoami answers the tokenless local principal", async () => {
    const a = await startServer();
    const res = await a.api("GET", "/v1/whoami");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      workspace: "local",
      workspace_name: null,
      actor: "local",
      kind: "local",
      group: null,
      tools: null,
      read_only: false,
    });
  });

  it("refuses the archive routes to a scoped credential with 403 forbidden; whoami names its scope", async () => {
    let scoped: Principal = LOCAL_PRINCIPAL;
    const a = await startServer({
      authenticate: (req) => (req.headers.authorization === "Bearer k" ? scoped : LOCAL_PRINCIPAL),
    });
    await seed(a);
    const group = (await a.api("GET", "/v1/groups/app")).body;
    scoped = { kind: "scoped", workspace: "local", actor: "key:k", groupId: group.id, tools: ["kv_*"] };
    const key = { authorization: "Bearer k" };
    const archive = await download(a, "/v1/groups/app/export");
    const sha = archive.headers.get("x-prim-archive-sha256") as string;
    expectError(await a.api("GET", "/v1/groups/app/export", undefined, key), 403, "forbidden");
    expectError(await a.api("GET", "/v1/groups/app/import", undefined, key), 403, "forbidden");
    expectError(await post(a, `/v1/groups/app/import?sha256=${sha}`, archive.bytes, key), 403, "forbidden");
    expect((await a.api("GET", "/v1/whoami", undefined, key)).body).toEqual({
      workspace: "local",
      workspace_name: null,
      actor: "key:k",
      kind: "scoped",
      group: { id: group.id, name: "app" },
      tools: ["kv_*"],
      read_only: false,
    });
  });
});
