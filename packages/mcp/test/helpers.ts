import { rmSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Engine, Invoker } from "@prim/engine";
import { LOCAL_PRINCIPAL, ManualClock } from "@prim/engine";
import { mountSecretRequestPage } from "@prim/http";
import { openHost, PerFile, sharedHost } from "@prim/testkit/rest";
import type { ChangeFeed } from "@prim/wire";
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { mountMcp, unfenceData } from "../src/index.js";
import { openRemoteHost, type RemoteHost } from "./remote-harness.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** The file's engine processes, by `allowLoopbackFetch` (started on first use). */
const remoteHosts = new PerFile<boolean, RemoteHost>();

function sharedRemoteHost(allowLoopbackFetch: boolean): Promise<RemoteHost> {
  return remoteHosts.get(allowLoopbackFetch, () => openRemoteHost({ allowLoopbackFetch }));
}

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

/** Tests that need the engine in this process (its clock, REST routes, local auth): run once, in process. */
export function inProcessOnly(name: string, body: () => void): void {
  describe(`${name} (in-process invoker only)`, () => {
    beforeEach(() => {
      mode = "in-process";
    });
    body();
  });
}

/**
 * The MCP server on a free loopback port over a fresh data directory, REST too in process. The
 * tests of a file share one server (in process: one cell and app, `@prim/testkit/rest`'s local host; remote:
 * one engine process and MCP app), each test on a fresh tenant: the `local` workspace on its own
 * directory and clock, so no test sees another's groups, data or audit entries. A second server
 * in the same test gets a host of its own.
 */
export async function startMcpServer(options: { rootToken?: string; engine?: { allowLoopbackFetch?: boolean } } = {}) {
  const allowLoopbackFetch = options.engine?.allowLoopbackFetch ?? false;
  const clock = new ManualClock(1_800_000_000_000);
  let invoker: Invoker;
  let engine: Engine | undefined;
  let url: string;
  let dataDir: string;
  if (mode === "remote") {
    if (options.rootToken !== undefined) throw new Error("remote runs serve tokenless localhost only");
    let host = await sharedRemoteHost(allowLoopbackFetch);
    if (host.busy) {
      host = await openRemoteHost({ allowLoopbackFetch });
      cleanups.push(host.close);
    }
    dataDir = await host.open();
    cleanups.push(host.release);
    ({ invoker, url } = host);
  } else {
    const hostOptions = {
      allowLoopbackFetch,
      mount: (app: FastifyInstance, door: Invoker, changes: ChangeFeed) => {
        mountMcp(app, door, { changes });
        mountSecretRequestPage(app, door); // the local engine's page (createLocalServer mounts it)
      },
    };
    let host = await sharedHost(`mcp ${allowLoopbackFetch}`, hostOptions);
    if (host.busy) {
      host = await openHost(hostOptions);
      cleanups.push(host.close);
    }
    const tenant = host.attach({ clock, rootToken: options.rootToken });
    cleanups.push(() => rmSync(tenant.dataDir, { recursive: true, force: true }), tenant.release);
    ({ engine, dataDir } = tenant);
    ({ invoker, url } = host);
  }
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
    cleanups.push(async () => {
      // The server outlives the test: end the session there too (a test may have ended it).
      await transport.terminateSession().catch(() => {});
      await client.close();
    });
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

/**
 * Calls a tool that must succeed; checks the text rendering is the structured result, fenced as
 * data (the SDK client has already checked the structured result against the tool's output schema).
 */
export async function ok(s: Server, client: McpClient, name: string, args: Record<string, unknown>) {
  const res = await s.call(client, name, args);
  expect(res.isError, `${name}: ${res.text}`).toBe(false);
  const json = unfenceData(res.text as string);
  expect(json, `${name}: the text is fenced as data`).toBeDefined();
  expect(JSON.parse(json as string)).toEqual(res.data);
  return res.data;
}

/** A server, a session on group `g`, and a primitive `store` of `type` made through MCP. */
export async function withStore(type: string) {
  const s = await startMcpServer();
  const client = await s.connect("g");
  const prim = await ok(s, client, "primitive_create", { name: "store", type });
  return { s, client, prim, ok: (name: string, args: Record<string, unknown>) => ok(s, client, name, args) };
}
