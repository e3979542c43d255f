import type { TestServer } from "@prim/testkit/rest";

/**
 * Data stored before a test of hostile callers (the fuzz, cross-group keys): one primitive of
 * every type, with data, in one group, and the reads whose answers must not change.
 */

export const TYPES = ["db", "fs", "queue", "memory", "vault", "kv", "storage"] as const;
export type PrimitiveType = (typeof TYPES)[number];

export interface SeededGroup {
  name: string;
  groupId: string;
  ids: Record<PrimitiveType, string>;
  jobId: string;
  memoryId: string;
  signedToken: string;
  /** Reads whose answers must not change while hostile callers run. */
  reads: { method: string; path: string; body?: unknown }[];
}

async function must<T = any>(server: TestServer, method: string, path: string, body?: unknown, raw?: string) {
  const res =
    raw === undefined
      ? await server.api<T>(method, path, body)
      : await server.api<T>(method, path, raw, { "content-type": "application/octet-stream" });
  if (res.status >= 300) throw new Error(`seed ${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

export async function seedGroup(server: TestServer, name: string): Promise<SeededGroup> {
  const group = await must(server, "POST", "/v1/groups", { name });
  const ids = {} as Record<PrimitiveType, string>;
  for (const type of TYPES) {
    ids[type] = (await must(server, "POST", "/v1/primitives", { name: `${type}-one`, type, group: name })).id;
  }
  const p = (type: PrimitiveType) => `/v1/primitives/${ids[type]}`;

  await must(server, "PUT", `${p("kv")}/keys/alpha`, { value: { n: 1, list: [1, 2, 3] } });
  await must(server, "PUT", `${p("kv")}/keys/beta`, { value: "text ünïcode" });
  await must(server, "POST", `${p("kv")}/incr`, { key: "counter", by: 5 });

  await must(server, "POST", `${p("db")}/exec`, { sql: "create table t (id integer primary key, v text)" });
  await must(server, "POST", `${p("db")}/exec`, {
    sql: "insert into t (v) values ('one'), ('two'), (?)",
    params: ["x"],
  });
  await must(server, "POST", `${p("db")}/branches`, { name: "b1" });

  await must(server, "PUT", `${p("storage")}/objects/docs/a.txt`, undefined, "stored object bytes");
  await must(server, "PUT", `${p("storage")}/objects/docs/b.bin`, undefined, "\u0000\u0001\u0002");
  const presigned = await must(server, "POST", `${p("storage")}/presign`, { key: "docs/a.txt" });
  const signedToken = String(presigned.url).split("/v1/signed/")[1] ?? "";

  await must(server, "PUT", `${p("fs")}/files/dir/a.txt`, undefined, "file contents");
  await must(server, "PUT", `${p("fs")}/files/top.md`, undefined, "# heading\nsearchable words");

  const job = await must(server, "POST", `${p("queue")}/queues/jobs/messages`, { body: { task: "keep me" } });
  await must(server, "POST", `${p("queue")}/queues/jobs/messages`, { body: "second" });
  await must(server, "POST", `${p("queue")}/topics/news/subscriptions`, { queue: "jobs" });

  const memory = await must(server, "POST", `${p("memory")}/memories`, {
    kind: "fact",
    text: "the sky over the harbour is blue",
    tags: ["weather"],
    metadata: { source: "seed" },
  });

  await must(server, "PUT", `${p("vault")}/secrets/API_KEY`, { value: "s3cret-value-for-fuzz" });
  await must(server, "POST", `${p("vault")}/grants`, { name: "API_KEY", allow: { hosts: ["127.0.0.1"] } });

  const reads = [
    ...TYPES.map((t) => ({ method: "GET", path: p(t) })),
    { method: "GET", path: `${p("kv")}/keys/alpha` },
    { method: "GET", path: `${p("kv")}/keys/beta` },
    { method: "GET", path: `${p("kv")}/keys/counter` },
    { method: "GET", path: `${p("kv")}/keys?values=true` },
    { method: "POST", path: `${p("db")}/query`, body: { sql: "select * from t order by id" } },
    { method: "POST", path: `${p("db")}/query`, body: { sql: "select * from t order by id", branch: "b1" } },
    { method: "GET", path: `${p("db")}/tables` },
    { method: "GET", path: `${p("storage")}/objects/docs/a.txt` },
    { method: "GET", path: `${p("storage")}/objects/docs/b.bin` },
    { method: "GET", path: `${p("storage")}/objects` },
    { method: "GET", path: `/v1/signed/${signedToken}` },
    { method: "GET", path: `${p("fs")}/files/dir/a.txt` },
    { method: "GET", path: `${p("fs")}/files/top.md` },
    { method: "GET", path: `${p("queue")}/queues/jobs/messages/${job.id}` },
    { method: "GET", path: `${p("queue")}/queues/jobs/messages` },
    { method: "GET", path: `${p("memory")}/memories/${memory.id}` },
    { method: "GET", path: `${p("memory")}/memories` },
    { method: "GET", path: `${p("vault")}/secrets` },
    { method: "GET", path: `${p("vault")}/grants` },
  ];
  return { name, groupId: group.id, ids, jobId: job.id, memoryId: memory.id, signedToken, reads };
}

/** The answers of a group's reads, to compare before and after. */
export async function readAll(server: TestServer, group: SeededGroup) {
  const out: Record<string, { status: number; body: unknown }> = {};
  for (const read of group.reads) {
    const res = await server.api(read.method, read.path, read.body);
    out[`${read.method} ${read.path} ${JSON.stringify(read.body ?? "")}`] = { status: res.status, body: res.body };
  }
  return out;
}
