// cloud-kv benchmark: REST kv GET and PUT of 1 KiB values through apps/api with a workspace
// key (auth, catalog and audit in Postgres) against `prim dev` on the same machine, in the same
// run, same shape. Target: the cloud keeps ≥ 0.7× of local's requests per second for both.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildMessage, ParentMessage } from "./cloud-kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { failOnErrors, type Phase, ROUNDS, runPhases } from "./lib/load.js";
import { printRatio } from "./lib/verdict.js";

type PhaseName = "local_get" | "cloud_get" | "local_put" | "cloud_put";

const benchDir = dirname(fileURLToPath(import.meta.url));
const KEYS = 1000;
const PUT_BODY = JSON.stringify({ value: "v".repeat(1024) }); // a 1 KiB JSON string value
const CONNECTIONS = 50;
const TARGET = 0.7;

/** Creates group `bench`, kv `bench` and keys k0..k999 on one target; returns the kv's id. */
async function seed(base: string, headers: Record<string, string>): Promise<string> {
  const call = async (method: string, path: string, body: string) => {
    const res = await fetch(base + path, { method, headers: { ...headers, "content-type": "application/json" }, body });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return text;
  };
  await call("POST", "/v1/groups", JSON.stringify({ name: "bench" }));
  const created = await call("POST", "/v1/primitives", JSON.stringify({ name: "bench", type: "kv", group: "bench" }));
  const { id } = JSON.parse(created) as { id: string };
  for (let i = 0; i < KEYS; i += 50) {
    const batch = Array.from({ length: Math.min(50, KEYS - i) }, (_, j) => i + j);
    await Promise.all(batch.map((k) => call("PUT", `/v1/primitives/${id}/keys/k${k}`, PUT_BODY)));
  }
  return id;
}

/** The GET and PUT phases of one target, round-robin over its keys with prebuilt requests. */
function phasesOf(
  target: "local" | "cloud",
  url: string,
  id: string,
  headers: Record<string, string>,
): Phase<PhaseName>[] {
  const paths = Array.from({ length: KEYS }, (_, i) => `/v1/primitives/${id}/keys/k${i}`);
  const put = { method: "PUT" as const, headers: { ...headers, "content-type": "application/json" }, body: PUT_BODY };
  return [
    { name: `${target}_get`, url, requests: paths.map((path) => ({ method: "GET", path, headers })) },
    { name: `${target}_put`, url, requests: paths.map((path) => ({ ...put, path })) },
  ];
}

export async function run(): Promise<void> {
  const durationSeconds = benchSeconds(10);
  const warmupSeconds = Math.min(2, durationSeconds);
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "cloud-kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  try {
    const ready = await child.next("ready");
    const local = `http://127.0.0.1:${ready.localPort}`;
    const cloud = `http://127.0.0.1:${ready.cloudPort}`;
    const auth = { authorization: `Bearer ${ready.key}` };
    console.log(`cloud-kv bench: ${KEYS} keys × 1 KiB values, ${CONNECTIONS} connections, pipelining 1`);
    console.log(`  apps/api with a workspace key (Postgres catalog and audit) against prim dev`);
    console.log(
      `  ${warmupSeconds}s warm-up + ${durationSeconds}s measured per phase, in ${ROUNDS * 2} interleaved slices`,
    );
    const [localId, cloudId] = await Promise.all([seed(local, {}), seed(cloud, auth)]);
    const [localGet, localPut] = phasesOf("local", local, localId, {});
    const [cloudGet, cloudPut] = phasesOf("cloud", cloud, cloudId, auth);
    const phases = [localGet, cloudGet, localPut, cloudPut].filter((p) => p !== undefined);
    const results = await runPhases(phases, {
      connections: CONNECTIONS,
      warmupSeconds,
      durationSeconds,
      serverCpuMicros: () => childCpuMicros(child),
      // This machine's neighbours move whole seconds of throughput: more, shorter slices.
      rounds: ROUNDS * 2,
    });
    for (const name of ["cloud_get", "cloud_put", "local_get", "local_put"] as const) {
      const m = results[name];
      console.log(`RESULT ${name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${name}_p99 ${m.p99.toFixed(2)} ms`);
    }
    const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
    printRatio("cloud_get_vs_local", ratio(results.cloud_get.rps, results.local_get.rps), TARGET);
    printRatio("cloud_put_vs_local", ratio(results.cloud_put.rps, results.local_put.rps), TARGET);
    failOnErrors(results);
  } finally {
    await child.stop();
  }
}
