// kv GET/PUT of 1 KiB values against two REST servers of bench/cloud-kv-server.ts in one run,
// same shape: the parts cloud-kv.ts and limits.ts share.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildMessage, Endpoint, ParentMessage } from "../cloud-kv-server.js";
import { childCpuMicros, forkTs } from "./child.js";
import { benchSeconds, cpuProfileDir } from "./knobs.js";
import { failOnErrors, type Measured, type Phase, ROUNDS, runPhases } from "./load.js";

const benchDir = dirname(dirname(fileURLToPath(import.meta.url)));
const KEYS = 1000;
const PUT_BODY = JSON.stringify({ value: "v".repeat(1024) }); // a 1 KiB JSON string value
const CONNECTIONS = 50;

export const authOf = (endpoint: Endpoint): Record<string, string> =>
  endpoint.key === null ? {} : { authorization: `Bearer ${endpoint.key}` };

/** Creates group `bench`, kv `bench` and keys k0..k999 on one server; returns the kv's id. */
export async function seed(base: string, headers: Record<string, string>): Promise<string> {
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

/**
 * Measures `<name>_get` (and `<name>_put` with `puts`) for the baseline and the target, in
 * interleaved slices, prints the table and the RESULT lines; answers the figures by phase name.
 */
export async function compareKv<B extends string, T extends string>(options: {
  title: string;
  mode: "local" | "limits";
  names: { baseline: B; target: T };
  puts: boolean;
}): Promise<Record<string, Measured>> {
  const durationSeconds = benchSeconds(10);
  const warmupSeconds = Math.min(2, durationSeconds);
  const rounds = ROUNDS * 2; // this machine's neighbours move whole seconds of throughput
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "cloud-kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
    args: [options.mode],
  });
  try {
    const ready = await child.next("ready");
    console.log(`${options.title}: ${KEYS} keys × 1 KiB values, ${CONNECTIONS} connections, pipelining 1`);
    console.log(
      `  ${warmupSeconds}s warm-up + ${durationSeconds}s measured per phase, in ${rounds} interleaved slices`,
    );
    const phases: Phase[] = [];
    const ids = await Promise.all(
      [ready.baseline, ready.target].map((e) => seed(`http://127.0.0.1:${e.port}`, authOf(e))),
    );
    const ops = options.puts ? (["get", "put"] as const) : (["get"] as const);
    for (const op of ops) {
      for (const [name, endpoint, id] of [
        [options.names.baseline, ready.baseline, ids[0]],
        [options.names.target, ready.target, ids[1]],
      ] as const) {
        const headers = authOf(endpoint);
        const paths = Array.from({ length: KEYS }, (_, i) => `/v1/primitives/${id}/keys/k${i}`);
        phases.push({
          name: `${name}_${op}`,
          url: `http://127.0.0.1:${endpoint.port}`,
          requests: paths.map((path) =>
            op === "get"
              ? { method: "GET" as const, path, headers }
              : {
                  method: "PUT" as const,
                  path,
                  headers: { ...headers, "content-type": "application/json" },
                  body: PUT_BODY,
                },
          ),
        });
      }
    }
    const results: Record<string, Measured> = await runPhases(phases, {
      connections: CONNECTIONS,
      warmupSeconds,
      durationSeconds,
      serverCpuMicros: () => childCpuMicros(child),
      rounds,
    });
    for (const phase of phases) {
      const m = results[phase.name] as Measured;
      console.log(`RESULT ${phase.name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${phase.name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${phase.name}_p99 ${m.p99.toFixed(2)} ms`);
    }
    failOnErrors(results);
    return results;
  } finally {
    await child.stop();
  }
}

/** a's requests per second over b's. */
export const rpsRatio = (a: Measured | undefined, b: Measured | undefined) =>
  a !== undefined && b !== undefined && b.rps > 0 ? a.rps / b.rps : 0;
