import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Engine, type LocalEngineOptions, ManualClock } from "@prim/engine";
import { createLocalServer } from "@prim/http";
import { afterEach, expect } from "vitest";
import { mountMcp } from "../src/index.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** The local REST + MCP server on a free loopback port over a fresh data directory. */
export async function startMcpServer(options: { rootToken?: string; engine?: Partial<LocalEngineOptions> } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-mcp-"));
  const clock = new ManualClock(1_800_000_000_000);
  const engine = Engine.openLocal({ dataDir, clock, ...options.engine });
  const app = createLocalServer({ engine, rootToken: options.rootToken });
  mountMcp(app, engine);
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  cleanups.push(async () => {
    await app.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  /** An MCP client session on `/mcp/<group>` (optional `?tools=`). */
  const connect = async (group: string, query = "", headers: Record<string, string> = {}) => {
    const client = new Client({ name: "prim-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp/${group}${query}`), {
      requestInit: { headers },
    });
    await client.connect(transport);
    cleanups.push(() => client.close());
    return Object.assign(client, { http: transport });
  };
  /** Calls a tool; returns its structured result and whether it is an error. */
  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const res = await client.callTool({ name, arguments: args });
    return {
      isError: res.isError === true,
      data: res.structuredContent as any,
      text: (res.content as { text: string }[])[0]?.text,
    };
  };
  return { url, engine, clock, dataDir, connect, call };
}

type Server = Awaited<ReturnType<typeof startMcpServer>>;
type McpClient = Awaited<ReturnType<Server["connect"]>>;

/** Calls a tool that must succeed; checks the text rendering is the structured result. */
export async function ok(s: Server, client: McpClient, name: string, args: Record<string, unknown>) {
  const res = await s.call(client, name, args);
  expect(res.isError, `${name}: ${res.text}`).toBe(false);
  expect(JSON.parse(res.text as string)).toEqual(res.data);
  return res.data;
}

/** A server, a session on group `g`, and a primitive `store` of `type` made through MCP. */
export async function withStore(type: string) {
  const s = await startMcpServer();
  const client = await s.connect("g");
  const prim = await ok(s, client, "primitive_create", { name: "store", type });
  return { s, client, prim, ok: (name: string, args: Record<string, unknown>) => ok(s, client, name, args) };
}
