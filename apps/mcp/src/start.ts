import { createMcpApp, type McpApp } from "./app.js";
import { readMcpEnv } from "./env.js";

/** What `npm run cloud` runs for MCP: reads the configuration, starts the app. */
export async function startMcp(source: NodeJS.ProcessEnv = process.env): Promise<{ url: string; mcp: McpApp }> {
  const env = readMcpEnv(source);
  const mcp = await createMcpApp(env);
  try {
    const url = await mcp.app.listen({ port: env.PRIM_MCP_PORT, host: env.PRIM_LISTEN_HOST });
    return { url, mcp };
  } catch (err) {
    await mcp.close();
    throw err;
  }
}

/** The process: start, print the URL, close cleanly on SIGINT/SIGTERM. */
export async function main(): Promise<void> {
  let started: { url: string; mcp: McpApp };
  try {
    started = await startMcp();
  } catch (err) {
    console.error(`prim mcp: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  console.log(`prim cloud: mcp listening on ${started.url}/mcp`);
  const stop = () =>
    void started.mcp.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
