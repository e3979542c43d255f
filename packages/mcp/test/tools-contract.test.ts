import { OPERATION_NAMES } from "@prim/wire";
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
});
