// mcp-cloud benchmark: MCP `tools/call kv_get` through apps/mcp (the remote invoker to the
// cell's internal invoke, a workspace key, X-Service-Group) against the same call on
// `prim dev`'s `/mcp/<group>`, in one run, same shape. Target: the cloud keeps ≥ 0.5×.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ChildMessage, Endpoint, ParentMessage } from "./cloud-kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { authOf, seed } from "./lib/kv-compare.js";
import { failOnErrors, type Phase, ROUNDS, runPhases } from "./lib/load.js";
import { printRatio } from "./lib/verdict.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 50;
const TARGET = 0.5;

/** Opens a session on `url` (the SDK client does the handshake) and answers its headers. */
async function session(url: string, headers: Record<string, string>): Promise<Record<string, string>> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "prim-bench", version: "1.0.0" });
  await client.connect(transport);
  const check = await client.callTool({ name: "kv_get", arguments: { primitive: "bench", key: "k1" } });
  if (check.isError) throw new Error(`kv_get over ${url}: ${JSON.stringify(check.content)}`);
  return {
    ...headers,
    "mcp-session-id": transport.sessionId as string,
    "mcp-protocol-version": transport.protocolVersion ?? "2025-06-18",
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
}

function phase(name: string, endpoint: Endpoint, path: string, headers: Record<string, string>): Phase {
  const requests = Array.from({ length: 1000 }, (_, i) => ({
    method: "POST" as const,
    path,
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "kv_get", arguments: { primitive: "bench", key: `k${i}` } },
    }),
  }));
  return { name, url: `http://127.0.0.1:${endpoint.port}`, requests };
}

export async function run(): Promise<void> {
  const durationSeconds = benchSeconds(10);
  const warmupSeconds = Math.min(2, durationSeconds);
  const rounds = ROUNDS * 2;
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "cloud-kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
    args: ["mcp"],
  });
  try {
    const { baseline, target } = await child.next("ready");
    console.log(
      `mcp-cloud bench: tools/call kv_get of 1 KiB values, ${CONNECTIONS} connections, one session each side`,
    );
    console.log(`  apps/mcp (remote invoker, workspace key) against prim dev's /mcp/<group>`);
    console.log(
      `  ${warmupSeconds}s warm-up + ${durationSeconds}s measured per phase, in ${rounds} interleaved slices`,
    );
    await seed(`http://127.0.0.1:${baseline.port}`, authOf(baseline));
    await seed(`http://127.0.0.1:${target.rest}`, authOf(target));
    const localHeaders = await session(`http://127.0.0.1:${baseline.port}/mcp/bench`, {});
    const cloudHeaders = await session(`http://127.0.0.1:${target.port}/mcp`, {
      ...authOf(target),
      "x-service-group": "bench",
    });
    const phases = [
      phase("local_mcp_get", baseline, "/mcp/bench", localHeaders),
      phase("cloud_mcp_get", target, "/mcp", cloudHeaders),
    ];
    const results = await runPhases(phases, {
      connections: CONNECTIONS,
      warmupSeconds,
      durationSeconds,
      serverCpuMicros: () => childCpuMicros(child),
      rounds,
    });
    for (const p of phases) {
      const m = results[p.name];
      if (m === undefined) continue;
      console.log(`RESULT ${p.name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${p.name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${p.name}_p99 ${m.p99.toFixed(2)} ms`);
    }
    const local = results.local_mcp_get?.rps ?? 0;
    printRatio("cloud_mcp_get_vs_local", local > 0 ? (results.cloud_mcp_get?.rps ?? 0) / local : 0, TARGET);
    failOnErrors(results);
  } finally {
    await child.stop();
  }
}
