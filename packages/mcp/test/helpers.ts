import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Engine, type Invoker, LOCAL_PRINCIPAL, type LocalEngineOptions, ManualClock } from "@prim/engine";
import { createLocalServer } from "@prim/http";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { mountMcp } from "../src/index.js";
import { startRemoteEngine } from "./remote-harness.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/**
 * How the MCP server reaches data: the engine in this process, or a `RemoteInvoker` to an engine
 * in a child process (its internal listener) — the cloud's MCP app's arrangement.
 */
export type InvokerMode = "in-process" | "remote";
let mode: InvokerMode = "in-process";

/**
 * Declares `body`'s tests twice, once per invoker, so a regression in either shows up. The
 * remote runs cannot reach the engine's clock or REST routes (they live in the child):
 * `body` gets the mode to skip such tests.
 */
export function forEachInvoker(name: string, body: (mode: InvokerMode) => void): void {
  for (const each of ["in-process", "remote"] as const) {
    describe(`${name} (${each} invoker)`, () => {
      beforeEach(() => {
        mode = each;
      });
      body(each);
    });
  }
}

/** The MCP server on a free loopback port over a fresh data directory, REST too in process. */
export async function startMcpServer(options: { rootToken?: string; engine?: Partial<LocalEngineOptions> } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-mcp-"));
  const clock = new ManualClock(1_800_000_000_000);
  let invoker: Invoker;
  let engine: Engine | undefined;
  let stopEngine: () => Promise<void>;
  let app: Awaited<ReturnType<typeof startRemoteEngine>>["app"];
  if (mode === "remote") {
    const remote = await startRemoteEngine(dataDir, options);
    invoker = remote.invoker;
    app = remote.app;
    stopEngine = remote.stop;
  } else {
    engine = Engine.openLocal({ dataDir, clock, ...options.engine });
    invoker = engine;
    app = createLocalServer({ engine, rootToken: options.rootToken });
    stopEngine = engine.close.bind(engine);
  }
  mountMcp(app, invoker);
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  cleanups.push(async () => {
    await app.close();
    await stopEngine();
    rmSync(dataDir, { recursive: true, force: true });
  });
  /** The whole audit trail (newest first), read through the invoker like any caller would. */
  const audit = async () =>
    (await invoker.invoke<{ data: any[] }>(LOCAL_PRINCIPAL, "audit.list", null, { limit: 200 })).data;
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
  return { url, engine: engine as Engine, clock, dataDir, invoker, audit, connect, call };
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
