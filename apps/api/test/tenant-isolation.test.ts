import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createWorkspace, readPlacement, setCellState } from "@prim/db";
import { REST_ROUTES } from "@prim/http";
import {
  type Answer,
  MARK,
  requestFor,
  type Seeded,
  seed,
  send,
  startCells,
  TARGETED_ROUTES,
  type TestCellNode,
  type TestCells,
  typeOf,
  UNTARGETED_ROUTES,
} from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Tenant isolation, generated from the route table: workspace A's key, for every route,
// addressing workspace B's group, primitives, keys, objects, files, jobs, memories, secrets,
// branches and snapshots; B's signed URLs and A's re-addressed to the other's object; B's group
// archive and unfinished archive upload named by id and digest. Never B's data, always refused;
// each refusal next to its positive control (B, or A on its own object, succeeds on the same
// object), and B's data intact after. Two cells over one database and S3, both workspaces
// placed on cell-b: every door is tried on the owner's cell and through a forward from cell-a.

let cells: TestCells;
let owner: TestCellNode;
let entry: TestCellNode;
const ws: Record<"a" | "b", { id: string; key: string; seeded: Seeded }> = {} as never;
/** B's group exported by B: a resumable archive of B's (`?archive=`). */
let bArchive: { id: string; bytes: Buffer };
const SIGNED_ROUTES = REST_ROUTES.filter((r) => r.url.startsWith("/v1/signed"));
/** The method of the signed URL each signed route takes (a new signed route needs a line here). */
const TOKEN_METHOD: Record<string, "GET" | "PUT"> = { GET: "GET", HEAD: "GET", PUT: "PUT" };

/** Limits are on; an Enterprise rate no sweep reaches (the sweeps are not about rates). */
const UNLIMITED = { plan: "enterprise", rps: 100_000, burst: 100_000 } as const;

const DOORS = [
  { door: "on the owner's cell", tag: "owner", base: () => owner.url },
  { door: "through a forward (cell-a to cell-b)", tag: "forward", base: () => entry.url },
];

beforeAll(async () => {
  cells = await startCells("isolation", ["cell-a", "cell-b"]);
  [entry, owner] = ["cell-a", "cell-b"].map((id) => cells.cells.find((c) => c.id === id) as TestCellNode) as [
    TestCellNode,
    TestCellNode,
  ];
  const pool = owner.api.hub.pool;
  // Both on cell-b: cell-a is closed while they are made (placement picks an open cell).
  await setCellState(pool, "cell-a", "closed");
  try {
    for (const [name, group] of [
      ["a", "a-group"],
      ["b", "b-group"],
    ] as const) {
      const made = await createWorkspace(pool, { name: name.toUpperCase(), ...UNLIMITED });
      expect((await readPlacement(pool, made.workspace.id))?.cell).toBe("cell-b");
      ws[name] = { id: made.workspace.id, key: made.key, seeded: await seed(owner.url, made.key, group) };
    }
  } finally {
    await setCellState(pool, "cell-a", "open");
  }
  const exported = await fetch(`${owner.url}/v1/groups/b-group/export`, {
    headers: { authorization: `Bearer ${ws.b.key}` },
  });
  bArchive = {
    id: exported.headers.get("x-prim-archive-id") as string,
    bytes: Buffer.from(await exported.arrayBuffer()),
  };
  expect(exported.status).toBe(200);
}, 90_000);
afterAll(() => cells?.stop(), 30_000);

it("covers the whole route table", () => {
  expect(TARGETED_ROUTES.length + UNTARGETED_ROUTES.length + SIGNED_ROUTES.length).toBe(REST_ROUTES.length);
  expect(TARGETED_ROUTES.length).toBeGreaterThan(70);
  expect(SIGNED_ROUTES.map((r) => r.method).filter((m) => TOKEN_METHOD[m] === undefined)).toEqual([]);
});

describe.each(DOORS)("another workspace's ids, $door", ({ tag, base }) => {
  const b = () => ws.b.seeded;

  it("answers 404 not_found and nothing of B for each targeted route, by id and by name", async () => {
    const leaks: string[] = [];
    for (const route of TARGETED_ROUTES) {
      for (const groupBy of route.target === "group" ? (["id", "name"] as const) : (["id"] as const)) {
        const request = requestFor(route, b(), groupBy);
        const answer = await send(base(), ws.a.key, request);
        const where = `${request.method} ${request.path}`;
        const expected = route.method === "HEAD" ? { status: 404 } : { status: 404, code: "not_found" };
        const got = route.method === "HEAD" ? { status: answer.status } : { status: answer.status, code: answer.code };
        if (JSON.stringify(got) !== JSON.stringify(expected) || answer.text.includes(MARK)) {
          leaks.push(`${where} (${route.op}, ${typeOf(route)}) → ${answer.status} ${answer.text.slice(0, 160)}`);
        }
      }
    }
    expect(leaks).toEqual([]);
  }, 120_000);

  it("keeps B out of A's untargeted routes: lists, creates into B's group, the audit trail", async () => {
    const answers: string[] = [];
    for (const route of UNTARGETED_ROUTES) {
      const request = requestFor(route, b());
      // A create naming B's group must not find it (A has no group of that name).
      if (route.op === "primitive.create") request.body = JSON.stringify({ name: "x", type: "kv", group: "b-group" });
      const answer = await send(base(), ws.a.key, request);
      answers.push(`${route.method} ${route.url} ${answer.status}`);
      for (const id of [b().group.id, ...Object.values(b().ids), b().job, b().memory, b().snapshot]) {
        expect(answer.text, `${route.method} ${route.url}`).not.toContain(id);
      }
      expect(answer.text).not.toContain(MARK);
      if (route.op === "primitive.create") expect(answer).toMatchObject({ status: 404, code: "not_found" });
    }
    const trail = await send(base(), ws.a.key, { method: "GET", path: "/v1/audit?group=b-group" });
    expect(JSON.parse(trail.text).data).toEqual([]);
    expect(answers.length).toBe(UNTARGETED_ROUTES.length);
  });

  it("refuses a signed URL re-addressed to the other workspace's object (403), on every signed route; each unaltered URL serves its owner", async () => {
    const { a, b: bw } = ws;
    const grantOf = (w: typeof a) => ({ w: w.id, p: w.seeded.ids.storage, g: w.seeded.group.id });
    const tokens = {
      a: { GET: await presign(a.key, a.seeded, "GET"), PUT: await presign(a.key, a.seeded, "PUT") },
      b: { GET: await presign(bw.key, bw.seeded, "GET"), PUT: await presign(bw.key, bw.seeded, "PUT") },
    };
    const refusals: string[] = [];
    for (const route of SIGNED_ROUTES) {
      const method = TOKEN_METHOD[route.method] as "GET" | "PUT";
      // What a holder of one URL can make of it: the object, the workspace, or both swapped for
      // the other workspace's, the signature kept. A's URLs toward B, and B's toward A.
      const forged = [
        readdressed(tokens.a[method], grantOf(bw)),
        readdressed(tokens.a[method], { p: bw.seeded.ids.storage, g: bw.seeded.group.id }),
        readdressed(tokens.a[method], { w: bw.id }),
        readdressed(tokens.b[method], grantOf(a)),
      ];
      for (const token of forged) {
        const answer = await signed(base(), route.method, token, "forged upload");
        const got = route.method === "HEAD" ? [answer.status] : [answer.status, answer.code];
        const expected = route.method === "HEAD" ? [403] : [403, "forbidden"];
        if (JSON.stringify(got) !== JSON.stringify(expected) || answer.text.includes(MARK)) {
          refusals.push(`${route.method} ${token.slice(0, 40)}… → ${answer.status} ${answer.text.slice(0, 120)}`);
        }
      }
      // Positive controls: the same URLs, unaltered, do what they were signed for.
      for (const owner of ["a", "b"] as const) {
        const answer = await signed(base(), route.method, tokens[owner][method], `${owner}'s upload`);
        expect(answer.status, `${route.method} ${owner}'s own URL`).toBe(200);
        if (route.method === "GET") expect(answer.text).toBe(`${MARK} storage`);
      }
    }
    expect(refusals).toEqual([]);
    // No forged upload landed anywhere: each store holds its owner's.
    for (const owner of ["a", "b"] as const) {
      const got = await send(base(), ws[owner].key, {
        method: "GET",
        path: `/v1/primitives/${ws[owner].seeded.ids.storage}/objects/up.txt`,
      });
      expect(got.text).toBe(`${owner}'s upload`);
    }
  });

  it("does not resume B's export by its id in A (404 not_found); B resumes it", async () => {
    for (const group of ["a-group", "b-group"]) {
      const answer = await rangeOfExport(base(), ws.a.key, group, bArchive.id);
      expect(answer, group).toMatchObject({ status: 404, code: "not_found" });
      expect(answer.bytes.includes(bArchive.bytes.subarray(0, 512))).toBe(false);
    }
    const own = await rangeOfExport(base(), ws.b.key, "b-group", bArchive.id);
    expect(own.status).toBe(206);
    expect(own.bytes.equals(bArchive.bytes.subarray(0, 1024))).toBe(true);
  });

  it("does not show or resume B's unfinished upload by its digest in A; B resumes it", async () => {
    const group = `b-restore-${tag}`;
    const { digest, received } = await unfinishedUpload(group);
    const status = (key: string, name: string) =>
      send(base(), key, { method: "GET", path: `/v1/groups/${name}/import?sha256=${digest}` });
    // B's group name, and a name only A uses (A's own groups hold data: an import there is 409 anyway).
    for (const name of [group, "a-restore"]) {
      const seen = await status(ws.a.key, name);
      expect(JSON.parse(seen.text).upload, name).toEqual({ sha256: digest, received: 0 });
      // The rest of B's bytes at B's offset: A holds no such upload, so nothing resumes.
      const resumed = await importFrom(base(), ws.a.key, name, digest, received);
      expect(resumed, name).toMatchObject({ status: 409, code: "conflict" });
      expect(resumed.text).toContain("has 0 bytes here");
    }
    expect((await send(base(), ws.a.key, { method: "GET", path: `/v1/groups/${group}` })).status).toBe(404);
    // Positive control: B sees its upload and completes it from the same offset.
    expect(JSON.parse((await status(ws.b.key, group)).text).upload).toEqual({ sha256: digest, received });
    const done = await importFrom(base(), ws.b.key, group, digest, received);
    expect(done.status, done.text).toBe(201);
    expect(JSON.parse(done.text).imported).toHaveLength(7);
  });
});

it("left every piece of B's data as it was, on cell-b alone (every request to cell-a was forwarded)", async () => {
  for (const w of [ws.a, ws.b]) {
    expect(existsSync(join(owner.dataDir, w.id))).toBe(true);
    expect(existsSync(join(entry.dataDir, w.id))).toBe(false);
  }
  const b = ws.b.seeded;
  const get = async (path: string) => send(entry.url, ws.b.key, { method: "GET", path });
  const p = (type: keyof Seeded["ids"]) => `/v1/primitives/${b.ids[type]}`;
  expect(JSON.parse((await get(`${p("kv")}/keys/k`)).text).value).toBe(`${MARK} kv`);
  expect((await get(`${p("storage")}/objects/obj.txt`)).text).toBe(`${MARK} storage`);
  expect((await get(`${p("fs")}/files/dir/file.txt`)).text).toBe(`${MARK} fs`);
  expect(JSON.parse((await get(`${p("queue")}/queues/q/messages/${b.job}`)).text).status).toBe("ready");
  expect(JSON.parse((await get(`${p("memory")}/memories/${b.memory}`)).text).superseded_by).toBeNull();
  expect(JSON.parse((await get(`${p("vault")}/secrets`)).text).data.map((s: { name: string }) => s.name)).toEqual([
    "SECRET",
  ]);
  expect(JSON.parse((await get(`${p("db")}/branches`)).text).data.map((x: { name: string }) => x.name)).toEqual(["br"]);
  const listed = JSON.parse((await get("/v1/primitives?group=b-group")).text).data;
  expect(listed.map((x: { name: string; paused: boolean }) => [x.name, x.paused]).sort()).toEqual(
    ["db", "fs", "kv", "memory", "queue", "storage", "vault"].map((t) => [`${t}-1`, false]),
  );
  const rows = await send(entry.url, ws.b.key, {
    method: "POST",
    path: `${p("db")}/query`,
    body: JSON.stringify({ sql: "SELECT v FROM t" }),
    contentType: "application/json",
  });
  expect(JSON.parse(rows.text).rows).toEqual([{ v: `${MARK} db` }]);
});

/** The token of a signed URL for `seeded`'s storage: a download of obj.txt, or an upload to up.txt. */
async function presign(key: string, seeded: Seeded, method: "GET" | "PUT"): Promise<string> {
  const res = await send(owner.url, key, {
    method: "POST",
    path: `/v1/primitives/${seeded.ids.storage}/presign`,
    body: JSON.stringify({ key: method === "GET" ? "obj.txt" : "up.txt", method }),
    contentType: "application/json",
  });
  const token = /\/v1\/signed\/(.+)$/.exec(JSON.parse(res.text).url)?.[1];
  if (token === undefined) throw new Error(`presign: ${res.status} ${res.text}`);
  return token;
}

/** A signed URL's token with grant fields replaced and its signature kept (all a holder can forge). */
function readdressed(token: string, fields: Record<string, string>): string {
  const [payload, mac] = token.split(".") as [string, string];
  const grant = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  return `${Buffer.from(JSON.stringify({ ...grant, ...fields })).toString("base64url")}.${mac}`;
}

/** A credential-free request to `/v1/signed/{token}` (a PUT sends `body`). */
async function signed(base: string, method: string, token: string, body: string): Promise<Answer> {
  const res = await fetch(`${base}/v1/signed/${token}`, {
    method,
    ...(method === "PUT" ? { body, headers: { "content-type": "text/plain" } } : {}),
  });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = JSON.parse(text).error?.code;
  } catch {
    code = undefined;
  }
  return { status: res.status, text, code };
}

/** The first KiB of export `archive` of `group`, as a resumed download asks for it. */
async function rangeOfExport(base: string, key: string, group: string, archive: string) {
  const res = await fetch(`${base}/v1/groups/${group}/export?archive=${archive}`, {
    headers: { authorization: `Bearer ${key}`, range: "bytes=0-1023" },
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const code = res.headers.get("content-type")?.includes("json") ? JSON.parse(bytes.toString()).error?.code : undefined;
  return { status: res.status, code, bytes };
}

/**
 * B's import of its own archive into `group`, broken off after part of it arrived (the body
 * throws, as a dropped connection does): the unfinished upload a resume names by its digest.
 */
async function unfinishedUpload(group: string): Promise<{ digest: string; received: number }> {
  const principal = await owner.api.resolver.resolve(ws.b.key);
  const received = Math.floor(bArchive.bytes.length / 2) + 7;
  async function* droppedAfter(bytes: Buffer): AsyncGenerator<Buffer> {
    yield bytes;
    throw new Error("socket hang up");
  }
  const digest = createHash("sha256").update(bArchive.bytes).digest("hex");
  await expect(
    owner.api.invoker.invoke(principal, "group.import", null, {
      group,
      sha256: digest,
      body: droppedAfter(bArchive.bytes.subarray(0, received)),
    }),
  ).rejects.toThrow("socket hang up");
  return { digest, received };
}

/** `POST /v1/groups/{group}/import?sha256=&offset=` with B's archive from `offset` on. */
async function importFrom(base: string, key: string, group: string, digest: string, offset: number): Promise<Answer> {
  const res = await fetch(`${base}/v1/groups/${group}/import?sha256=${digest}&offset=${offset}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-tar" },
    body: bArchive.bytes.subarray(offset),
  });
  const text = await res.text();
  return { status: res.status, text, code: JSON.parse(text).error?.code };
}
