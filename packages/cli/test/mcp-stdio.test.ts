// `prim mcp` over stdio with the official SDK client, as real processes: alone on a data
// directory (it opens the engine itself, resources and subscriptions included) and beside a
// running `prim dev` (it relays to it, so the one engine that owns the files answers both).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { primCommand, ROOT, startPrim } from "@prim/testkit";
import { TOOL_CATALOG } from "@prim/wire";
import { afterEach, describe, expect, it } from "vitest";

const SLOW = { timeout: 90_000 };

const children: ChildProcess[] = [];
const clients: Client[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-mcp-stdio-"));
  dirs.push(dir);
  return dir;
}

/** `prim mcp ...` as a stdio MCP server, connected with the SDK client. */
async function startMcp(command: string[], args: string[]) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...command, "mcp", ...args],
    cwd: ROOT,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "prim-stdio-test", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`prim mcp did not start: ${String(err)}\n${stderr}`);
  }
  clients.push(client);
  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await client.callTool({ name, arguments: args });
    return { isError: res.isError === true, data: res.structuredContent as any };
  };
  return { client, call, stderr: () => stderr };
}

async function rest(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === "" ? null : JSON.parse(text);
}

describe("prim mcp (stdio)", () => {
  it("direct mode: opens the data directory itself, lists tools and calls kv tools", SLOW, async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    const command = primCommand();
    const { client, call } = await startMcp(command, ["--group", "g", "--data", data]);
    expect(client.getServerVersion()?.name).toBe("prim");
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toHaveLength(TOOL_CATALOG.length);
    expect(names).toEqual(expect.arrayContaining(["kv_get", "kv_set", "db_query", "storage_sign", "vault_use"]));

    const kv = await call("primitive_create", { name: "cache", type: "kv" });
    expect(kv).toMatchObject({ isError: false, data: { name: "cache", type: "kv", group: "g" } });
    expect((await call("kv_set", { primitive: "cache", key: "greeting", value: { text: "hi" } })).data).toMatchObject({
      key: "greeting",
      version: 1,
    });
    expect((await call("kv_get", { primitive: "cache", key: "greeting" })).data.value).toEqual({ text: "hi" });
    expect((await call("kv_list", { primitive: "cache" })).data.data.map((e: { key: string }) => e.key)).toEqual([
      "greeting",
    ]);
    expect(await call("kv_get", { primitive: "cache", key: "nope" })).toMatchObject({
      isError: true,
      data: { error: { code: "not_found" } },
    });
    // Closing stdin ends the process and releases the directory: a new session sees the data.
    await client.close();
    const again = await startMcp(command, ["--group", "g", "--data", data]);
    expect((await again.call("kv_get", { primitive: "cache", key: "greeting" })).data.value).toEqual({ text: "hi" });
  });

  it("direct mode: resources, and a subscribed file's write notifies (the engine's change feed)", SLOW, async () => {
    const dir = tempDir();
    const { client, call } = await startMcp(primCommand(), ["--group", "g", "--data", join(dir, "data")]);
    expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: false });
    const fs = (await call("primitive_create", { name: "docs", type: "fs" })).data;
    await call("fs_write", { primitive: "docs", path: "/a.md", content: "one" });
    const uri = `prim://${fs.id}/a.md`;
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([uri]);
    const updated = new Promise<string>((resolve) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
    );
    await client.subscribeResource({ uri });
    await call("fs_write", { primitive: "docs", path: "/a.md", content: "two" });
    expect(await updated).toBe(uri);
    expect((await client.readResource({ uri })).contents[0]).toMatchObject({ text: "two" });
  });

  it("direct mode: exits with 0 once stdin ends, a db's SQL host included", SLOW, async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [...primCommand(), "mcp", "--group", "g", "--data", join(dir, "data")], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const send = (message: object) => child.stdin?.write(`${JSON.stringify(message)}\n`);
    const answered = (id: number) =>
      new Promise<void>((resolve) => {
        const check = () => (out.includes(`"id":${id}}`) ? resolve() : setTimeout(check, 20));
        check();
      });
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    await answered(1);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "primitive_create", arguments: { name: "d", type: "db" } },
    });
    await answered(2);
    send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "db_exec", arguments: { primitive: "d", sql: "CREATE TABLE t (x)" } },
    });
    await answered(3);
    const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.stdin?.end();
    expect(await exit).toBe(0);
    const lines = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(lines[2].result.isError).toBeUndefined();
  });

  it("direct mode: --tools narrows tools/list and refuses other tools", SLOW, async () => {
    const dir = tempDir();
    const command = primCommand();
    const { client, call } = await startMcp(command, [
      "--group",
      "g",
      "--data",
      join(dir, "data"),
      "--tools",
      "kv_get",
    ]);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["kv_get", "primitive_list"]);
    // The spec's answer: a tool error result with code tool_not_allowed (not a protocol error).
    const refused = await client.callTool({ name: "kv_set", arguments: { primitive: "x", key: "a", value: 1 } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("tool_not_allowed");
    expect((await call("primitive_list", {})).data).toEqual({ data: [], next_cursor: null });
  });

  it("proxy mode: relays to the running prim dev, so MCP and REST see the same engine", SLOW, async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    const command = primCommand();
    const dev = await startDev(command, data);
    // Written through stdio MCP...
    const { client, call } = await startMcp(command, ["--group", "g", "--data", data]);
    expect((await client.listTools()).tools).toHaveLength(TOOL_CATALOG.length);
    const kv = await call("primitive_create", { name: "cache", type: "kv" });
    expect(kv.isError).toBe(false);
    await call("kv_set", { primitive: "cache", key: "from-mcp", value: [1, 2, 3] });
    // ...read back over REST from the dev server (a second engine could not even have opened
    // the directory: prim dev holds its lock).
    expect((await rest(dev.url, "GET", `/v1/primitives/${kv.data.id}/keys/from-mcp`)).value).toEqual([1, 2, 3]);
    const group = await rest(dev.url, "GET", "/v1/groups/g");
    expect(group.primitives.map((p: { id: string }) => p.id)).toEqual([kv.data.id]);

    // And the other way round: written over REST, read through MCP.
    await rest(dev.url, "PUT", `/v1/primitives/${kv.data.id}/keys/from-rest`, { value: { ok: true } });
    expect((await call("kv_get", { primitive: "cache", key: "from-rest" })).data.value).toEqual({ ok: true });
    const db = await rest(dev.url, "POST", "/v1/primitives", { name: "main", type: "db", group: "g" });
    const listed = await call("primitive_list", {});
    expect(listed.data.data.map((p: { id: string }) => p.id)).toEqual([kv.data.id, db.id]);
    expect(await call("kv_get", { primitive: "cache", key: "nope" })).toMatchObject({
      isError: true,
      data: { error: { code: "not_found" } },
    });
  });

  it("proxy mode: --tools narrows tools/list on the relayed session", SLOW, async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    const command = primCommand();
    const dev = await startDev(command, data);
    const { client, call } = await startMcp(command, ["--group", "g", "--data", data, "--tools", "kv_get"]);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["kv_get", "primitive_list"]);
    const kv = await rest(dev.url, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "g" });
    await rest(dev.url, "PUT", `/v1/primitives/${kv.id}/keys/a`, { value: "seen" });
    expect((await call("kv_get", { primitive: "cache", key: "a" })).data.value).toBe("seen");
    const refused = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "a", value: 1 } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("tool_not_allowed");
    expect((await rest(dev.url, "GET", `/v1/primitives/${kv.id}/keys/a`)).value).toBe("seen");
  });
});

describe("prim mcp (stdio) beside a prim dev with a root token", () => {
  it("relays with --root-token; without it the engine refuses the session", SLOW, async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    const command = primCommand();
    const dev = await startDev(command, data, ["--root-token", "tok-123"]);
    const refused = await startMcp(command, ["--group", "g", "--data", data]).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    // The relay answers the initialize itself, with the engine's refusal in the message.
    expect(String(refused)).toMatch(/-32603: the engine at http:\/\/localhost:\d+\/mcp\/g did not answer/);
    expect(String(refused)).toContain("invalid_token");
    const { call } = await startMcp(command, ["--group", "g", "--data", data, "--root-token", "tok-123"]);
    const kv = await call("primitive_create", { name: "cache", type: "kv" });
    expect(kv.isError).toBe(false);
    await call("kv_set", { primitive: "cache", key: "k", value: 1 });
    const root = { authorization: "Bearer tok-123" };
    expect((await rest(dev.url, "GET", `/v1/primitives/${kv.data.id}/keys/k`, undefined, root)).value).toBe(1);
    // Calls made through the relay are the root token's, as the engine's audit trail shows.
    const entries = (await rest(dev.url, "GET", "/v1/audit?limit=50", undefined, root)).data as {
      action: string;
      actor: string;
    }[];
    expect(entries.find((e) => e.action === "kv.set")?.actor).toBe("key:root");
  });
});

/** Runs `prim dev` on `data` and waits until it listens. */
function startDev(command: string[], data: string, extra: string[] = []) {
  return startPrim(command, ["dev", "--port", "0", "--data", data, ...extra], children);
}
