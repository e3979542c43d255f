// Requests for every route of the REST table, generated from it: path parameters filled from a
// workspace's seeded ids, and a valid sample body for each operation, so that an answer other
// than the expected one is never a validation error masking what was tested. A route added to
// the table without a sample here fails `requestFor` (and so the suites), never goes untested.
import { REST_ROUTES, type RestRoute } from "@prim/http";
import type { PrimitiveType } from "@prim/wire";

/** Everything one workspace seeded (see `seed`), as the routes address it. */
export interface Seeded {
  group: { id: string; name: string };
  /** One primitive of each type. */
  ids: Record<PrimitiveType, string>;
  job: string;
  memory: string;
  snapshot: string;
}

/** The text every seeded value contains: an answer carrying it is a leak. */
export const MARK = "SEEDED-DATA";

const SAMPLE_BODIES: Partial<Record<RestRoute["op"], unknown>> = {
  "kv.set": { value: 1 },
  "kv.mget": { keys: ["k"] },
  "kv.mset": { items: [{ key: "m", value: 1 }] },
  "kv.mdelete": { keys: ["k"] },
  "kv.incr": { key: "n" },
  "db.query": { sql: "SELECT * FROM t" },
  "db.exec": { sql: "SELECT * FROM t" },
  "db.batch": { statements: [{ sql: "SELECT 1" }] },
  "db.branch.create": { name: "br2" },
  "db.branch.promote": {},
  "storage.copy": { from: "obj.txt", to: "copy.txt" },
  "storage.presign": { key: "obj.txt" },
  "storage.revoke": {},
  "fs.move": { from: "/dir/file.txt", to: "/moved.txt" },
  "fs.mkdir": { path: "/made" },
  "fs.fork": { from: "/dir" },
  "queue.send": { body: 1 },
  "queue.receive": {},
  "queue.ack": { lease_token: "lease_x" },
  "queue.heartbeat": { lease_token: "lease_x" },
  "queue.requeue": {},
  "queue.purge": { status: "done" },
  "queue.subscribe": { queue: "q2" },
  "queue.publish": { body: 1 },
  "queue.send_batch": { messages: [{ body: 1 }] },
  "queue.ack_batch": { acks: [{ job: "job_x", lease_token: "lease_x" }] },
  "queue.publish_batch": { messages: [{ body: 1 }] },
  "memory.remember": { kind: "fact", text: "x" },
  "memory.supersede": { text: "y" },
  "memory.recall": { query: MARK },
  "memory.consolidate": {},
  "vault.put": { value: "v" },
  "vault.grant": { name: "SECRET", allow: { hosts: ["example.com"] } },
  "vault.fetch": { url: "https://example.com/", auth: { bearer: "SECRET" } },
  "primitive.update": { name: "renamed" },
  "primitive.snapshot": {},
  "primitive.restore": { snapshot: "snap" },
  "primitive.fork": {},
  "primitive.pause": {},
  "primitive.resume": {},
  "group.create": { name: "made" },
  "primitive.create": { name: "made", type: "kv" },
};

const SAMPLE_QUERIES: Partial<Record<RestRoute["op"], string>> = {
  "fs.glob": "?pattern=*",
  "fs.search": "?q=seeded",
};

/** The primitive type a route addresses (lifecycle, export and change-feed routes: a kv). */
export function typeOf(route: RestRoute): PrimitiveType {
  const tag = route.tag as PrimitiveType | "primitives" | "changes";
  return tag === "primitives" || tag === "changes" ? "kv" : tag;
}

/** The rest-of-path value for a wildcard: a key, an object key or a file path. */
function wildcardValue(type: PrimitiveType): string {
  if (type === "storage") return "obj.txt";
  if (type === "fs") return "dir/file.txt";
  return "k";
}

export interface RouteRequest {
  method: string;
  path: string;
  body?: string;
  contentType?: string;
}

/** A request for `route` addressing `seeded`'s group and primitives (`group` by id or name). */
export function requestFor(route: RestRoute, seeded: Seeded, groupBy: "id" | "name" = "id"): RouteRequest {
  const type = typeOf(route);
  const values: Record<string, string> = {
    id: seeded.ids[type],
    group: seeded.group[groupBy],
    queue: "q",
    job: seeded.job,
    memory: seeded.memory,
    name: "SECRET",
    branch: "br",
    table: "t",
    topic: "topic",
  };
  let path = route.url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`route ${route.method} ${route.url}: no sample for :${name}`);
    return encodeURIComponent(value);
  });
  if (path.endsWith("*")) path = path.slice(0, -1) + wildcardValue(type);
  path += SAMPLE_QUERIES[route.op] ?? "";
  if (route.rawBody) return { method: route.method, path, body: `${MARK} raw`, contentType: "text/plain" };
  if (route.from !== "body") return { method: route.method, path };
  const body = SAMPLE_BODIES[route.op];
  if (body === undefined) throw new Error(`route ${route.method} ${route.url}: no sample body for ${route.op}`);
  return { method: route.method, path, body: JSON.stringify(body), contentType: "application/json" };
}

/** Routes addressing a group or primitive by path; the rest are untargeted or signed. */
export const TARGETED_ROUTES = REST_ROUTES.filter((r) => r.target !== undefined);
export const UNTARGETED_ROUTES = REST_ROUTES.filter((r) => r.target === undefined && !r.url.startsWith("/v1/signed"));

export interface Answer {
  status: number;
  text: string;
  code: string | undefined;
}

/** Sends a route request with a bearer key; answers status, text and the error code if any. */
export async function send(base: string, key: string, request: RouteRequest): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (request.contentType !== undefined) headers["content-type"] = request.contentType;
  const res = await fetch(`${base}${request.path}`, { method: request.method, headers, body: request.body });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: res.status, text, code };
}

/** Seeds a workspace through its key: group `name` with one primitive of each type, each holding data. */
export async function seed(base: string, key: string, name: string): Promise<Seeded> {
  const json = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const out = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`seed ${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
    return out;
  };
  const raw = async (path: string, body: string) => {
    const res = await fetch(`${base}${path}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" },
      body,
    });
    if (res.status >= 300) throw new Error(`seed PUT ${path}: ${res.status} ${await res.text()}`);
  };
  const group = await json("POST", "/v1/groups", { name });
  const ids = {} as Record<PrimitiveType, string>;
  for (const type of ["db", "fs", "queue", "memory", "vault", "kv", "storage"] as const) {
    ids[type] = (await json("POST", "/v1/primitives", { name: `${type}-1`, type, group: name })).id;
  }
  const p = (type: PrimitiveType) => `/v1/primitives/${ids[type]}`;
  await json("PUT", `${p("kv")}/keys/k`, { value: `${MARK} kv` });
  await json("POST", `${p("db")}/batch`, {
    statements: [{ sql: "CREATE TABLE t (v TEXT)" }, { sql: "INSERT INTO t VALUES (?)", params: [`${MARK} db`] }],
  });
  await json("POST", `${p("db")}/branches`, { name: "br" });
  await raw(`${p("storage")}/objects/obj.txt`, `${MARK} storage`);
  await raw(`${p("fs")}/files/dir/file.txt`, `${MARK} fs`);
  const job = (await json("POST", `${p("queue")}/queues/q/messages`, { body: `${MARK} queue` })).id;
  await json("POST", `${p("queue")}/topics/topic/subscriptions`, { queue: "q" });
  const memory = (await json("POST", `${p("memory")}/memories`, { kind: "fact", text: `${MARK} memory` })).id;
  await json("PUT", `${p("vault")}/secrets/SECRET`, { value: `${MARK}-vault-secret` });
  await json("POST", `${p("vault")}/grants`, { name: "SECRET", allow: { hosts: ["example.com"] } });
  const snapshot = (await json("POST", `${p("kv")}/snapshots`, { name: "snap" })).id;
  return { group: { id: group.id, name }, ids, job, memory, snapshot };
}
