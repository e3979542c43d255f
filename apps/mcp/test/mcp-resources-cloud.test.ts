// MCP resources in the cloud: scoped keys list and read as their tools and group allow (the
// cell's engine decides), and an apps/mcp session subscribed to a file hears a write made
// through REST on the cell (apps/api), told through the cell's change notices on Redis
// (`prim:changes:<workspace>`) — with apps/mcp in this process (sharing nothing with the cell
// but Postgres and Redis) and as a process of its own.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createKey, createWorkspace } from "@prim/db";
import { FROM_SOURCES, ROOT } from "@prim/testkit";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpApp } from "../src/index.js";
import { listeningMcp } from "./in-process.js";

const SECRET = randomBytes(24).toString("hex");
let cloud: TestCloud;
let mcp: McpApp;
let url: string;

beforeAll(async () => {
  cloud = await startCloud("mcp-resources", { PRIM_INTERNAL_SECRET: SECRET });
  ({ mcp, url } = await listeningMcp({
    databaseUrl: cloud.databaseUrl,
    internalUrl: cloud.internalUrl,
    secret: SECRET,
  }));
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await cloud?.stop();
});

/** A REST write of a file on the cell. */
async function putFile(key: string, id: string, path: string, body: string) {
  const res = await fetch(`${cloud.url}/v1/primitives/${id}/files${path}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/octet-stream" },
    body,
  });
  expect(res.status).toBeLessThan(300);
}

async function connect(key: string, group: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}`, "x-service-group": group } },
  });
  const client = new Client({ name: "prim-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** The JSON-RPC error a request fails with. */
async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

describe("apps/mcp resources with scoped keys", () => {
  it("lists and reads by the key's tools and group, as tool calls are decided", async () => {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "Scoped", plan: "pro" });
    const workspace = ws.workspace.id;
    for (const group of ["app", "ops"]) {
      await call(cloud.url, ws.key, "POST", "/v1/groups", { name: group });
    }
    const docs = await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "docs", type: "fs", group: "app" });
    const theirs = await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "docs", type: "fs", group: "ops" });
    await putFile(ws.key, docs.body.id, "/a.txt", "app file");
    await putFile(ws.key, theirs.body.id, "/a.txt", "ops file");
    const uri = `prim://${docs.body.id}/a.txt`;

    const writer = await connect(
      (await createKey(cloud.api.hub.pool, { workspace, group: "app", tools: ["fs_write"] })).key,
      "app",
    );
    expect((await writer.listResources()).resources).toEqual([]);
    const refused = await rpcError(writer.readResource({ uri }));
    expect(refused.data).toMatchObject({ code: "tool_not_allowed" });

    const reader = await connect(
      (await createKey(cloud.api.hub.pool, { workspace, group: "app", tools: ["fs_read"] })).key,
      "app",
    );
    expect((await reader.listResources()).resources.map((r) => r.uri)).toEqual([uri]);
    expect((await reader.readResource({ uri })).contents[0]).toMatchObject({ text: "app file" });
    // The other group's file, by id: not found for the app key; its own group's key reads it.
    const otherUri = `prim://${theirs.body.id}/a.txt`;
    const missing = await rpcError(reader.readResource({ uri: otherUri }));
    expect(missing.code).toBe(-32002);
    expect(missing.data).toMatchObject({ code: "not_found" });
    const ops = await connect(
      (await createKey(cloud.api.hub.pool, { workspace, group: "ops", tools: ["fs_read"] })).key,
      "ops",
    );
    expect((await ops.readResource({ uri: otherUri })).contents[0]).toMatchObject({ text: "ops file" });
    for (const c of [writer, reader, ops]) await c.close();
  });
});

describe("apps/mcp resource subscriptions", () => {
  it("notifies a subscribed session of a write made through REST on the cell", async () => {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "Notes", plan: "pro" });
    await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
    const fs = await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "docs", type: "fs", group: "app" });
    const id = fs.body.id as string;
    await putFile(ws.key, id, "/a.txt", "1");
    await putFile(ws.key, id, "/b.txt", "1");

    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${ws.key}`, "x-service-group": "app" } },
    });
    const client = new Client({ name: "prim-test", version: "1.0.0" });
    await client.connect(transport);
    expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: false });
    const seen: string[] = [];
    const waiters: { uri: string; resolve: () => void }[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      seen.push(n.params.uri);
      for (const w of waiters.splice(0)) {
        if (w.uri === n.params.uri) w.resolve();
        else waiters.push(w);
      }
    });
    const next = (uri: string) => new Promise<void>((resolve) => waiters.push({ uri, resolve }));

    const a = `prim://${id}/a.txt`;
    const b = `prim://${id}/b.txt`;
    expect((await client.readResource({ uri: a })).contents[0]).toMatchObject({ text: "1" });
    await client.subscribeResource({ uri: a });
    await client.subscribeResource({ uri: b });
    // The session's event stream (the client's GET) comes up on its own time: write until the
    // first notice arrives; from then on each arrives, in order.
    for (let attempt = 0; ; attempt++) {
      const arrived = next(a);
      await putFile(ws.key, id, "/a.txt", `v${attempt}`);
      if (await Promise.race([arrived.then(() => true), new Promise((r) => setTimeout(() => r(false), 200))])) break;
      expect(attempt).toBeLessThan(50);
    }
    expect((await client.readResource({ uri: a })).contents[0]).toMatchObject({ text: expect.stringMatching(/^v/) });

    // Unsubscribed from a: a write of a, then of b, brings b's notice alone.
    await client.unsubscribeResource({ uri: a });
    seen.length = 0;
    const bArrived = next(b);
    await putFile(ws.key, id, "/a.txt", "after");
    await putFile(ws.key, id, "/b.txt", "after");
    await bArrived;
    expect(seen).toEqual([b]);
    await client.close();
  });
});

/**
 * apps/mcp as a process of its own (its `main`, from the sources under tsx): what it hears of
 * the cell can only come through Redis. Answers its `/mcp` URL and a way to stop it.
 */
async function startMcpProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const entry = new URL("../src/start.ts", import.meta.url).href;
  const child = spawn(
    process.execPath,
    [
      ...FROM_SOURCES,
      "--input-type=module",
      "-e",
      `const { main } = await import(${JSON.stringify(entry)}); await main();`,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: cloud.databaseUrl,
        PRIM_INTERNAL_URL: cloud.internalUrl,
        PRIM_INTERNAL_SECRET: SECRET,
        PRIM_MCP_PORT: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<void>((done) => child.on("exit", () => done()));
  const stop = async () => {
    child.kill("SIGTERM");
    await exited;
  };
  let output = "";
  const started = await new Promise<string>((done, fail) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /mcp listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url !== undefined) done(url);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => fail(new Error(`apps/mcp exited (${code}) while starting: ${output}`)));
  });
  return { url: started, stop };
}

describe("apps/mcp in another process", () => {
  it("hears the cell's writes through Redis alone", { timeout: 60_000 }, async () => {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "Apart", plan: "pro" });
    await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
    const fs = await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "docs", type: "fs", group: "app" });
    const id = fs.body.id as string;
    await putFile(ws.key, id, "/a.txt", "1");
    const child = await startMcpProcess();
    try {
      const transport = new StreamableHTTPClientTransport(new URL(child.url), {
        requestInit: { headers: { authorization: `Bearer ${ws.key}`, "x-service-group": "app" } },
      });
      const client = new Client({ name: "prim-test", version: "1.0.0" });
      await client.connect(transport);
      const uri = `prim://${id}/a.txt`;
      let notified: (() => void) | undefined;
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        if (n.params.uri === uri) notified?.();
      });
      await client.subscribeResource({ uri });
      for (let attempt = 0; ; attempt++) {
        const arrived = new Promise<boolean>((done) => {
          notified = () => done(true);
          setTimeout(() => done(false), 200);
        });
        await putFile(ws.key, id, "/a.txt", `v${attempt}`);
        if (await arrived) break;
        expect(attempt).toBeLessThan(50);
      }
      expect((await client.readResource({ uri })).contents[0]).toMatchObject({ text: expect.stringMatching(/^v/) });
      await client.close();
    } finally {
      await child.stop();
    }
  });
});
