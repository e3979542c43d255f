// Each tool's Read/Write (@prim/wire's TOOL_CATALOG: the consent screen's badges and read-only
// preset, MCP's readOnlyHint) against what its operations declare in the engine's registry: a
// tool is "write" when any of its operations may write. No list is kept by hand besides the
// catalog's one field per tool and the engine's one field per operation.
import { OPERATIONS } from "@prim/engine";
import { TOOL_CATALOG } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { checkToolAccess, derivedAccess, TOOLS, type ToolSpec } from "../src/index.js";

describe("tool access from the operations' declarations", () => {
  it("declares every tool's access exactly as its operations say", () => {
    const derived = Object.fromEntries(TOOLS.map((tool) => [tool.name, derivedAccess(tool, OPERATIONS)]));
    expect(Object.fromEntries(TOOL_CATALOG.map((tool) => [tool.name, tool.access]))).toEqual(derived);
    expect(checkToolAccess(TOOLS, OPERATIONS)).toBe(TOOLS);
  });

  it("read tools are exactly those whose every operation reads", () => {
    expect(TOOL_CATALOG.filter((tool) => tool.access === "read").map((tool) => tool.name)).toEqual([
      "primitive_list",
      "db_query",
      "fs_read",
      "fs_search",
      "memory_recall",
      "vault_list",
      "kv_get",
      "kv_list",
      "storage_list",
      "storage_read",
    ]);
  });

  it("refuses a tool declared read that runs a writing operation, and one declared write that only reads", () => {
    const byName = (name: string) => TOOLS.find((tool) => tool.name === name) as ToolSpec;
    const sign = { ...byName("storage_sign"), access: "read" } as ToolSpec;
    const get = { ...byName("kv_get"), access: "write" } as ToolSpec;
    expect(() => checkToolAccess([sign, get], OPERATIONS)).toThrow(
      "storage_sign is declared read but its operations write; kv_get is declared write but its operations only read",
    );
    // One operation turned into a write makes its tool "write".
    const ops = OPERATIONS.map((op) => (op.name === "kv.get" ? { ...op, access: "write" as const } : op));
    expect(derivedAccess(byName("kv_get"), ops)).toBe("write");
    expect(() => checkToolAccess(TOOLS, ops)).toThrow("kv_get is declared read but its operations write");
  });
});
