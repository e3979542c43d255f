import type { TestServer } from "@prim/testkit/rest";

/**
 * One adapter per primitive type for the table-driven lifecycle suite: `write(n)` adds the n-th
 * item through the type's REST routes, `state()` reads back everything that defines the data,
 * in a form that compares equal exactly when the data is the same.
 */
export interface TypeAdapter {
  type: string;
  /** Prepares an empty primitive (e.g. a db table). */
  setup?(s: TestServer, base: string): Promise<void>;
  write(s: TestServer, base: string, n: number): Promise<void>;
  state(s: TestServer, base: string): Promise<unknown>;
}

async function ok<T = any>(promise: Promise<{ status: number; body: T; text: string }>): Promise<T> {
  const res = await promise;
  if (res.status >= 300) throw new Error(`unexpected ${res.status}: ${res.text}`);
  return res.body;
}

async function bytes(s: TestServer, path: string): Promise<string> {
  const res = await fetch(s.url + path, { headers: s.auth });
  if (!res.ok) throw new Error(`GET ${path} → ${res.status}`);
  return Buffer.from(await res.arrayBuffer()).toString("base64");
}

/** Big enough (100 KiB) to live in the blob store, small ones stay inline. */
const payload = (n: number) => (n % 2 === 0 ? `small-${n}` : `large-${n}-`.repeat(10_000));

export const ADAPTERS: TypeAdapter[] = [
  {
    type: "kv",
    write: (s, base, n) => ok(s.api("PUT", `${base}/keys/k${n}`, { value: { n } })),
    async state(s, base) {
      const page = await ok(s.api("GET", `${base}/keys?values=true`));
      return page.data.map((e: { key: string; value: unknown }) => [e.key, e.value]);
    },
  },
  {
    type: "db",
    setup: (s, base) => ok(s.api("POST", `${base}/query`, { sql: "CREATE TABLE t (n INTEGER PRIMARY KEY, v TEXT)" })),
    write: (s, base, n) =>
      ok(s.api("POST", `${base}/query`, { sql: "INSERT INTO t VALUES (?, ?)", params: [n, `v${n}`] })),
    async state(s, base) {
      return (await ok(s.api("POST", `${base}/query`, { sql: "SELECT * FROM t ORDER BY n" }))).rows;
    },
  },
  {
    type: "storage",
    async write(s, base, n) {
      const res = await fetch(`${s.url}${base}/objects/o${n}`, { method: "PUT", headers: s.auth, body: payload(n) });
      if (!res.ok) throw new Error(`PUT → ${res.status}`);
    },
    async state(s, base) {
      const page = await ok(s.api("GET", `${base}/objects`));
      const out: [string, string][] = [];
      for (const o of page.data as { key: string }[]) out.push([o.key, await bytes(s, `${base}/objects/${o.key}`)]);
      return out;
    },
  },
  {
    type: "fs",
    async write(s, base, n) {
      const res = await fetch(`${s.url}${base}/files/dir/f${n}.txt`, {
        method: "PUT",
        headers: s.auth,
        body: payload(n),
      });
      if (!res.ok) throw new Error(`PUT → ${res.status}`);
    },
    async state(s, base) {
      const listing = await ok(s.api("GET", `${base}/files?recursive=1`));
      const out: [string, string][] = [];
      for (const e of listing.data as { path: string; type: string }[]) {
        out.push([e.path, e.type === "file" ? await bytes(s, `${base}/files${e.path}`) : "dir"]);
      }
      return out;
    },
  },
  {
    type: "queue",
    write: (s, base, n) => ok(s.api("POST", `${base}/queues/q/messages`, { body: { n } })),
    async state(s, base) {
      const page = await ok(s.api("GET", `${base}/queues/q/messages?limit=200`));
      return page.data.map((j: { id: string; body: unknown; status: string }) => [j.id, j.body, j.status]);
    },
  },
  {
    type: "memory",
    write: (s, base, n) =>
      ok(s.api("POST", `${base}/memories`, { kind: "fact", text: `fact number ${n} about forks` })),
    async state(s, base) {
      const page = await ok(s.api("GET", `${base}/memories?limit=200`));
      return page.data.map((m: { id: string; text: string; superseded_by: unknown }) => [
        m.id,
        m.text,
        m.superseded_by,
      ]);
    },
  },
  {
    type: "vault",
    write: (s, base, n) => ok(s.api("PUT", `${base}/secrets/KEY_${n}`, { value: `secret-value-${n}` })),
    async state(s, base) {
      const page = await ok(s.api("GET", `${base}/secrets`));
      return page.data.map((e: { name: string; version: number }) => [e.name, e.version]);
    },
  },
];
