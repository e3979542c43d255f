import { OPERATION_NAMES, TOOL_CATALOG } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkTools, TOOLS, type ToolSpec } from "../src/index.js";

describe("MCP tools against the wire contract", () => {
  it("maps every tool action onto an operation the engine serves", () => {
    const used = new Set(TOOLS.flatMap((tool) => Object.values(tool.actions).map((a) => a.op)));
    expect([...used].filter((op) => !(OPERATION_NAMES as readonly string[]).includes(op))).toEqual([]);
    expect(checkTools(TOOLS)).toBe(TOOLS);
  });

  it("refuses, at start, a tool naming an operation that does not exist", () => {
    const stale = {
      name: "kv_get",
      title: "Get",
      description: "stale",
      shape: { key: z.string() },
      actions: { get: { op: "kv.fetch" } },
    } as unknown as ToolSpec;
    expect(() => checkTools([...TOOLS, stale])).toThrow("MCP tool kv_get (get): unknown operation kv.fetch");
  });

  it("serves exactly @prim/wire's catalog, in its order: a tool missing, added or moved fails the start", () => {
    expect(TOOLS.map((tool) => tool.name)).toEqual(TOOL_CATALOG.map((tool) => tool.name));
    for (const tool of TOOLS)
      expect(TOOL_CATALOG).toContainEqual(
        expect.objectContaining({ name: tool.name, title: tool.title, description: tool.description }),
      );
    expect(() => checkTools(TOOLS.slice(1))).toThrow("differ from @prim/wire's TOOL_CATALOG");
    expect(() => checkTools([...TOOLS.slice(1), TOOLS[0] as ToolSpec])).toThrow(
      "differ from @prim/wire's TOOL_CATALOG",
    );
    const extra = { ...(TOOLS[0] as ToolSpec), name: "kv_fetch" };
    expect(() => checkTools([...TOOLS, extra])).toThrow("differ from @prim/wire's TOOL_CATALOG");
  });
});
