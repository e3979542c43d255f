// kv benchmark: REST kv GET/PUT on the real local engine against a bare Fastify route that
// answers with the same bytes. The servers run in a child process (bench/kv-server.ts) so
// they do not share an event loop with autocannon, which runs here. A durable phase PUTs to a
// second kv primitive set `durable` (PATCH): each answer waits for the fsync covering its write.
// A second engine in the child runs with its change logs off (issue 42): kv PUT with the log
// recorded in each write's transaction against the same PUT without it, target fixed at 0.9.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildMessage, ParentMessage } from "./kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { failOnErrors, type Measured, type Phase, ROUNDS, runPhases } from "./lib/load.js";
import { childSyncs, syncsBetween } from "./lib/syncs.js";
import { printRatio } from "./lib/verdict.js";

type PhaseName = "bare_get" | "kv_get" | "bare_put" | "kv_put" | "kv_put_nolog" | "kv_put_durable";

const benchDir = dirname(fileURLToPath(import.meta.url));
const KEYS = 1000;
const PUT_BODY = JSON.stringify({ value: "v".repeat(1024) }); // a 1 KiB JSON string value
const JSON_HEADERS = { "content-type": "application/json" };
const CONNECTIONS = 50;
// Issue 43 raised get and put (fixed before its first run): 0.7 and 0.6 of bare Fastify.
const TARGETS = { get: 0.7, put: 0.6, durablePut: 0.5, changeLog: 0.9 };

async function call(method: string, url: string, body?: unknown): Promise<string> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = JSON_HEADERS;
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text}`);
  return text;
}

/** Creates kv primitive `name` in group `bench` with keys k0..k999; returns the primitive's id. */
async function seed(base: string, name: string, durable: boolean): Promise<string> {
  const created = await call("POST", `${base}/v1/primitives`, { name, type: "kv", group: "bench" });
  const { id } = JSON.parse(created) as { id: string };
  if (durable) await call("PATCH", `${base}/v1/primitives/${id}`, { durability: "durable" });
  for (let i = 0; i < KEYS; i += 50) {
    const urls = Array.from({ length: Math.min(50, KEYS - i) }, (_, j) => `${base}/v1/primitives/${id}/keys/k${i + j}`);
    await Promise.all(urls.map((url) => call("PUT", url, PUT_BODY)));
  }
  return id;
}

export async function run(): Promise<void> {
  const durationSeconds = benchSeconds(10);
  const warmupSeconds = Math.min(2, durationSeconds);
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  try {
    const ready = await child.next("ready");
    const base = `http://127.0.0.1:${ready.enginePort}`;
    const bare = `http://127.0.0.1:${ready.barePort}`;
    console.log(`kv bench: ${KEYS} keys × 1 KiB values, ${CONNECTIONS} connections, pipelining 1`);
    console.log(
      `          ${warmupSeconds}s warm-up + ${durationSeconds}s measured per phase, in ${ROUNDS} interleaved slices`,
    );

    const noLog = `http://127.0.0.1:${ready.noLogPort}`;
    await call("POST", `${base}/v1/groups`, { name: "bench" });
    await call("POST", `${noLog}/v1/groups`, { name: "bench" });
    const id = await seed(base, "bench", false);
    const noLogId = await seed(noLog, "bench", false);
    const durableId = await seed(base, "durable", true);
    const keyPath = (i: number, primitive = id) => `/v1/primitives/${primitive}/keys/k${i}`;
    // The bare routes answer with exactly the bytes the kv routes answer with.
    const getBody = await call("GET", `${base}${keyPath(0)}`);
    const putBody = await call("PUT", `${base}${keyPath(0)}`, PUT_BODY);
    child.send({ type: "bodies", get: getBody, put: putBody });
    await child.next("bodies-set");
    console.log(`response bodies: GET ${Buffer.byteLength(getBody)} B, PUT ${Buffer.byteLength(putBody)} B`);

    // Round-robin over the keys with prebuilt requests: autocannon does the same per-request
    // work in kv and bare phases (a setupRequest would rebuild the request buffer every time).
    const indexes = Array.from({ length: KEYS }, (_, i) => i);
    const put = { method: "PUT" as const, headers: JSON_HEADERS, body: PUT_BODY };
    const phases: Phase<PhaseName>[] = [
      { name: "bare_get", url: bare, requests: [{ method: "GET", path: "/bare" }] },
      { name: "kv_get", url: base, requests: indexes.map((i) => ({ method: "GET", path: keyPath(i) })) },
      { name: "bare_put", url: bare, requests: [{ ...put, path: "/bare" }] },
      { name: "kv_put", url: base, requests: indexes.map((i) => ({ ...put, path: keyPath(i) })) },
      { name: "kv_put_nolog", url: noLog, requests: indexes.map((i) => ({ ...put, path: keyPath(i, noLogId) })) },
      { name: "kv_put_durable", url: base, requests: indexes.map((i) => ({ ...put, path: keyPath(i, durableId) })) },
    ];
    const serverCpuMicros = () => childCpuMicros(child);
    // Only the durable primitive's writes wait for fsyncs: the engine itself is `fast`.
    const syncsBefore = await childSyncs(child);
    const results = await runPhases(phases, {
      connections: CONNECTIONS,
      warmupSeconds,
      durationSeconds,
      serverCpuMicros,
    });

    const syncs = syncsBetween(syncsBefore, await childSyncs(child));
    for (const name of ["kv_get", "kv_put", "kv_put_nolog", "kv_put_durable", "bare_get", "bare_put"] as const) {
      const m = results[name];
      console.log(`RESULT ${name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${name}_p99 ${m.p99.toFixed(2)} ms`);
    }
    const ratio = (kv: Measured, ceiling: Measured) => (ceiling.rps > 0 ? kv.rps / ceiling.rps : 0);
    const getRatio = ratio(results.kv_get, results.bare_get);
    const putRatio = ratio(results.kv_put, results.bare_put);
    printRatio("kv_get_vs_bare", getRatio, TARGETS.get);
    printRatio("kv_put_vs_bare", putRatio, TARGETS.put);
    printRatio("kv_put_changelog_on_vs_off", ratio(results.kv_put, results.kv_put_nolog), TARGETS.changeLog);
    // Counted over the durable phase's warm-ups and slices together; each PUT is one write, so
    // its rate over writes per fsync is the fsync rate.
    const perFsync = syncs.fsyncs > 0 ? syncs.writes / syncs.fsyncs : 0;
    console.log(`RESULT kv_put_durable_writes_per_fsync ${perFsync.toFixed(1)} writes/fsync`);
    const fsyncRate = perFsync > 0 ? results.kv_put_durable.rps / perFsync : 0;
    console.log(`RESULT kv_put_durable_fsyncs_per_sec ${fsyncRate.toFixed(0)} fsyncs/s`);
    printRatio("kv_put_durable_vs_bare", ratio(results.kv_put_durable, results.bare_put), TARGETS.durablePut);
    printRatio("kv_put_durable_vs_fast", ratio(results.kv_put_durable, results.kv_put), null);

    failOnErrors(results);
  } finally {
    await child.stop();
  }
}
