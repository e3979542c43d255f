// apps/mcp with several cells: each tool call goes straight to the cell its workspace is placed
// on (PRIM_INTERNAL_URL here answers nothing, so a call that reached a cell was routed by its
// placement), and a session keeps working across a move of its workspace.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readApiEnv } from "@prim/api";
import { moveWorkspace } from "@prim/cells";
import { createWorkspace, readPlacement } from "@prim/db";
import { call, startCells, type TestCells } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpApp } from "../src/index.js";
import { listeningMcp } from "./in-process.js";

let cells: TestCells;
let mcp: McpApp;
let url: string;

beforeAll(async () => {
  cells = await startCells("mcp-cells", ["cell-a", "cell-b"]);
  // Nothing listens at the fallback: routing must not need it.
  ({ mcp, url } = await listeningMcp({
    databaseUrl: cells.databaseUrl,
    internalUrl: "http://127.0.0.1:9",
    secret: cells.env.PRIM_INTERNAL_SECRET,
  }));
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await cells?.stop();
});

describe("apps/mcp over several cells", () => {
  it("calls the workspace's own cell, and the session survives a move of its workspace", async () => {
    const pool = cells.cells[0]?.api.hub.pool as NonNullable<(typeof cells.cells)[0]>["api"]["hub"]["pool"];
    const ws = await createWorkspace(pool, { name: "Agents", plan: "pro" });
    const from = (await readPlacement(pool, ws.workspace.id))?.cell as string;
    const entry = cells.cells.find((c) => c.id === from) as (typeof cells.cells)[0];
    await call(entry.url, ws.key, "POST", "/v1/groups", { name: "app" });
    await call(entry.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${ws.key}`, "x-service-group": "app" } },
    });
    const client = new Client({ name: "prim-test", version: "1.0.0" });
    await client.connect(transport);
    const set = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "k", value: 1 } });
    expect(set.isError).toBeFalsy();

    const to = cells.cells.find((c) => c.id !== from)?.id as string;
    const report = await moveWorkspace(
      readApiEnv({ ...cells.env, PRIM_DATA_DIR: "/nonexistent" }),
      ws.workspace.id,
      to,
    );
    expect(report.moved).toBe(true);
    const got = await client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "k" } });
    expect(got.isError).toBeFalsy();
    expect(JSON.stringify(got.structuredContent ?? got.content)).toContain("1");
    const again = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "k2", value: 2 } });
    expect(again.isError).toBeFalsy();
    const target = cells.cells.find((c) => c.id === to) as (typeof cells.cells)[0];
    expect((await call(target.url, ws.key, "GET", "/v1/groups")).status).toBe(200);
    await client.close();
  }, 60_000);
});
