// What a sweep over the route table needs so that every allowed request can succeed on its own
// group: the objects an earlier route of the sweep took away made again, a job in the state the
// route acts on; and how an answer reads as a success. Shared by apps/api's scoped-key and
// read-only sweeps (and any sweep that lets requests through on a seeded group).
import type { RestRoute } from "@prim/http";
import {
  type Answer,
  type RouteRequest,
  requestFor,
  type Seeded,
  send,
  TARGETED_ROUTES,
  UNTARGETED_ROUTES,
} from "./route-samples.js";

/** A request with a key that may write (making what a sweep's request needs); its JSON answer. */
type Maker = (
  method: string,
  path: string,
  body: unknown,
  contentType?: string,
) => Promise<{ id: string; data: { id: string; lease_token: string }[] }>;

/** A maker sending with `key` to `base`; throws on anything but a success. */
export function makerFor(base: string, key: string): Maker {
  return async (method, path, body, contentType = "application/json") => {
    const raw = contentType === "application/json" ? JSON.stringify(body) : String(body);
    const answer = await send(base, key, { method, path, body: raw, contentType });
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return JSON.parse(answer.text);
  };
}

/** A job of the sweep's queue `q` sent and received now (leased): its id and lease token. */
async function leasedJob(make: Maker, own: Seeded): Promise<{ id: string; lease_token: string }> {
  const q = `/v1/primitives/${own.ids.queue}/queues/q`;
  await make("POST", `${q}/messages`, { body: 1 });
  const [job] = (await make("POST", `${q}/receive`, {})).data;
  return job as { id: string; lease_token: string };
}

/** The request for job `job` with its lease token (in place of the seeded job's and a made-up one). */
function forJob(own: Seeded, request: RouteRequest, job: { id: string; lease_token: string }): RouteRequest {
  const body = { ...JSON.parse(request.body ?? "{}"), lease_token: job.lease_token };
  return { ...request, path: request.path.replace(own.job, job.id), body: JSON.stringify(body) };
}

/**
 * What an allowed request needs made before it, so that it can succeed: what an earlier route
 * of the sweep took away (storage.delete the object, fs.delete the file, memory.forget the
 * memory, db.branch.promote the branch), or a job in the state the route acts on.
 */
const MAKE_FIRST: Partial<
  Record<RestRoute["op"], (make: Maker, own: Seeded, request: RouteRequest) => Promise<RouteRequest>>
> = {
  "storage.copy": async (make, own, request) => {
    await make("PUT", `/v1/primitives/${own.ids.storage}/objects/obj.txt`, "again", "text/plain");
    return request;
  },
  "fs.move": async (make, own, request) => {
    await make("PUT", `/v1/primitives/${own.ids.fs}/files/dir/file.txt`, "again", "text/plain");
    return request;
  },
  "db.branch.delete": async (make, own, request) => {
    await make("POST", `/v1/primitives/${own.ids.db}/branches`, { name: "br" });
    return request;
  },
  "memory.supersede": async (make, own, request) => {
    const made = await make("POST", `/v1/primitives/${own.ids.memory}/memories`, { kind: "fact", text: "x" });
    return { ...request, path: request.path.replace(own.memory, made.id) };
  },
  "queue.ack": async (make, own, request) => forJob(own, request, await leasedJob(make, own)),
  "queue.heartbeat": async (make, own, request) => forJob(own, request, await leasedJob(make, own)),
  "queue.requeue": async (make, own, request) => {
    const job = await leasedJob(make, own);
    const q = `/v1/primitives/${own.ids.queue}/queues/q`;
    await make("POST", `${q}/messages/${job.id}/ack`, { lease_token: job.lease_token, action: "dead" });
    return { ...request, path: request.path.replace(own.job, job.id) };
  },
};

/**
 * The request to send for `route` on `own` so that an allowed caller succeeds: `sample` as is,
 * or after making what it needs with `make` (a key that may write).
 */
export async function prepared(make: Maker, route: RestRoute, own: Seeded, sample: RouteRequest) {
  const first = MAKE_FIRST[route.op];
  return first === undefined ? sample : first(make, own, sample);
}

/** The route's success: its own status, or for a route that picks one (`respond`), a 2xx. */
export function succeeded(route: RestRoute, status: number): boolean {
  return route.respond === undefined ? status === (route.status ?? 200) : status >= 200 && status < 300;
}

/**
 * vault.fetch's sample calls https://example.com/; a machine with no route there gets the
 * engine's 502 upstream_error, an answer only a call let through gives.
 */
const unreachable = (route: RestRoute, answer: Answer) =>
  route.op === "vault.fetch" && answer.status === 502 && answer.code === "upstream_error";

/** "allowed" for the route's success, else the refusal's code (a HEAD has no body: its status). */
export function verdict(route: RestRoute, answer: Answer): string {
  if (succeeded(route, answer.status) || unreachable(route, answer)) return "allowed";
  return route.method === "HEAD"
    ? `status ${answer.status}`
    : `${answer.status} ${answer.code ?? answer.text.slice(0, 120)}`;
}

/** The read routes a group's state is read through: GET (signed URLs apart), no archive, no caller facts. */
const STATE_ROUTES = [...TARGETED_ROUTES, ...UNTARGETED_ROUTES].filter(
  (r) => r.method === "GET" && !r.op.endsWith("export") && !r.op.startsWith("audit.") && r.op !== "auth.whoami",
);

/**
 * Everything the read routes answer about `own` (its group and primitives, and the workspace's
 * lists), read with `key`: equal before and after a call means the call changed nothing there.
 */
export async function readState(base: string, key: string, own: Seeded): Promise<string[]> {
  const out: string[] = [];
  for (const route of STATE_ROUTES) {
    const request = requestFor(route, own);
    const answer = await send(base, key, request);
    out.push(`${request.path} ${answer.status} ${answer.text}`);
  }
  return out;
}
