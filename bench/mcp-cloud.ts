// mcp-cloud benchmark: MCP `tools/call kv_get` through apps/mcp (the remote invoker to the
// cell's internal invoke, a workspace key, X-Service-Group) against the same call on
// `prim dev`'s `/mcp/<group>`, in one run, same shape. Target: the cloud keeps ≥ 0.5×.
// Phase `local_rest_get` is a REST kv GET of the same keys on the same `prim dev`: local MCP
// keeps ≥ 0.25× of it (what the MCP layer costs over the engine's own REST edge).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type autocannon from "autocannon";
import type { ChildMessage, Endpoint, ParentMessage } from "./cloud-kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { authOf, seed } from "./lib/kv-compare.js";
import { failOnErrors, type Phase, ROUNDS, runPhases } from "./lib/load.js";
import { printRatio } from "./lib/verdict.js";
import type { McpChildMessage, McpParentMessage } from "./mcp-server.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 50;
const TARGET = 0.5;
/** Issue 43 (fixed before its first run): local MCP tools/call kv_get ≥ 0.25× a REST kv GET on the same engine. */
export const TARGET_LOCAL_MCP_VS_REST = 0.25;

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

/**
 * One request entry whose body gets a fresh JSON-RPC id each time: the SDK's transport routes
 * answers by id, so two calls in flight with one id on one session would wait on each other.
 */
function phase(name: string, endpoint: Endpoint, path: string, headers: Record<string, string>): Phase {
  let id = 0;
  const request = {
    method: "POST" as const,
    path,
    headers,
    setupRequest: (req: autocannon.Request): autocannon.Request => {
      id++;
      return {
        ...req,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "kv_get", arguments: { primitive: "bench", key: `k${id % 1000}` } },
        }),
      };
    },
  };
  return { name, url: `http://127.0.0.1:${endpoint.port}`, requests: [request] };
}

export async function run(): Promise<void> {
  const durationSeconds = benchSeconds(10);
  const warmupSeconds = Math.min(2, durationSeconds);
  const rounds = ROUNDS * 2;
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "cloud-kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
    args: ["mcp"],
  });
  const mcpChild = forkTs<McpParentMessage, McpChildMessage>(join(benchDir, "mcp-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  try {
    const { baseline, target: cell } = await child.next("ready");
    const internal = cell.internal;
    if (internal === undefined) throw new Error("cloud-kv-server did not start an internal listener");
    mcpChild.send({
      type: "start",
      databaseUrl: internal.databaseUrl,
      internalUrl: internal.url,
      secret: internal.secret,
    });
    const target: Endpoint = { port: (await mcpChild.next("ready")).port, key: cell.key };
    console.log(
      `mcp-cloud bench: tools/call kv_get of 1 KiB values, ${CONNECTIONS} connections, one session each side`,
    );
    console.log(`  apps/mcp (remote invoker, workspace key) against prim dev's /mcp/<group>`);
    console.log(
      `  ${warmupSeconds}s warm-up + ${durationSeconds}s measured per phase, in ${rounds} interleaved slices`,
    );
    await seed(`http://127.0.0.1:${cell.port}`, authOf(cell));
    const localKv = await seed(`http://127.0.0.1:${baseline.port}`, authOf(baseline));
    const localHeaders = await session(`http://127.0.0.1:${baseline.port}/mcp/bench`, {});
    const cloudHeaders = await session(`http://127.0.0.1:${target.port}/mcp`, {
      ...authOf(target),
      "x-service-group": "bench",
    });
    const phases = [
      phase("local_mcp_get", baseline, "/mcp/bench", localHeaders),
      phase("cloud_mcp_get", target, "/mcp", cloudHeaders),
      {
        name: "local_rest_get",
        url: `http://127.0.0.1:${baseline.port}`,
        requests: Array.from({ length: 1000 }, (_, i) => ({
          method: "GET" as const,
          path: `/v1/primitives/${localKv}/keys/k${i}`,
          headers: authOf(baseline),
        })),
      },
    ];
    const results = await runPhases(phases, {
      connections: CONNECTIONS,
      warmupSeconds,
      durationSeconds,
      // Both server processes: the cloud's call runs in apps/mcp and in the cell.
      serverCpuMicros: async () => (await childCpuMicros(child)) + (await childCpuMicros(mcpChild)),
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
    const rest = results.local_rest_get?.rps ?? 0;
    printRatio("local_mcp_get_vs_rest_get", rest > 0 ? local / rest : 0, TARGET_LOCAL_MCP_VS_REST);
    failOnErrors(results);
  } finally {
    await mcpChild.stop();
    await child.stop();
  }
}
