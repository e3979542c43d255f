import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { isValidName, LOCAL_PRINCIPAL, narrowTools, openGroup } from "@prim/engine";
import { parseToolPatterns, proxyStdio, serveStdio } from "@prim/mcp";
import { runningEngine } from "./engine-file.js";
import { forgetEnvSecrets, ROOT_TOKEN_FLAG_WARNING, readEnv } from "./env.js";
import { embedderFromEnv, openLocalEngine } from "./local-engine.js";

/**
 * `prim mcp --group G [--data DIR] [--tools P] [--root-token T]` (or `PRIM_ROOT_TOKEN`): an MCP server on stdio for
 * one group. If a `prim dev` owns the data directory, every message is relayed to its
 * `/mcp/<group>` endpoint (one process owns the files, so nothing is opened twice and no
 * state is missed); otherwise this process opens the engine on the directory itself.
 */
export async function mcp(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      group: { type: "string" },
      data: { type: "string" },
      tools: { type: "string" },
      "root-token": { type: "string" },
    },
    strict: true,
  });
  const env = readEnv();
  forgetEnvSecrets();
  // stderr: stdout carries the MCP protocol.
  if (values["root-token"] !== undefined) console.error(ROOT_TOKEN_FLAG_WARNING);
  const group = values.group;
  if (group === undefined || !isValidName(group)) {
    throw new Error("--group: required, 1-63 characters of a-z, 0-9, '-', '_', '.'");
  }
  const dataDir = resolve(values.data ?? env.PRIM_DATA_DIR ?? ".prim");
  const patterns = parseToolPatterns(values.tools) ?? [];
  const running = runningEngine(dataDir);
  if (running !== null) {
    const query = patterns.length === 0 ? "" : `?tools=${encodeURIComponent(patterns.join(","))}`;
    const token = values["root-token"] ?? env.PRIM_ROOT_TOKEN;
    await proxyStdio(
      `${running.url}/mcp/${group}${query}`,
      token === undefined ? {} : { authorization: `Bearer ${token}` },
    );
    return;
  }
  const engine = openLocalEngine({ dataDir, embedder: embedderFromEnv(env), durability: env.PRIM_DURABILITY });
  try {
    const record = await openGroup(engine, LOCAL_PRINCIPAL, group);
    const principal = patterns.length === 0 ? LOCAL_PRINCIPAL : narrowTools(LOCAL_PRINCIPAL, patterns);
    // Without an HTTP server nothing answers signed URLs: storage_sign gives paths only.
    await serveStdio({ invoker: engine, principal, group: record, baseUrl: "", changes: engine.services.changes });
  } finally {
    await engine.close();
  }
}
