// Each tool's Read/Write (@prim/wire's TOOL_CATALOG: the consent screen's badges and read-only
// preset) and its MCP annotations against what its operations declare in the engine's registry.
// The engine declares each operation's access, destructive, idempotent and openWorld once;
// src/tools/effects.ts is generated from that (checked current here) and every hint is derived.
import { readFileSync } from "node:fs";
import { OPERATIONS } from "@prim/engine";
import { KEY_TOOL_CATALOG, TOOL_CATALOG } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { EFFECTS_FILE, renderEffects } from "../scripts/operation-effects.js";
import {
  checkToolAccess,
  derivedAccess,
  KEY_TOOLS,
  keyToolAnnotations,
  OPERATION_EFFECTS,
  TOOLS,
  type ToolSpec,
  toolAnnotations,
  toolOutputSchema,
} from "../src/index.js";
import { startMcpServer } from "./helpers.js";

const byName = (name: string) => TOOLS.find((tool) => tool.name === name) as ToolSpec;

describe("tool annotations from the operations' declarations", () => {
  it("src/tools/effects.ts is what the engine's registry declares (npm run gen -w @prim/mcp)", () => {
    expect(readFileSync(EFFECTS_FILE, "utf8")).toBe(renderEffects(OPERATIONS));
  });

  it("declares every tool's access exactly as its operations say", () => {
    const derived = Object.fromEntries(TOOLS.map((tool) => [tool.name, derivedAccess(tool)]));
    expect(Object.fromEntries(TOOL_CATALOG.map((tool) => [tool.name, tool.access]))).toEqual(derived);
    expect(checkToolAccess(TOOLS)).toBe(TOOLS);
  });

  it("derives every hint: read-only, destructive, idempotent and open-world tools", () => {
    const where = (hint: "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint") =>
      TOOLS.filter((tool) => toolAnnotations(tool)[hint] === true).map((tool) => tool.name);
    const reads = [
      "primitive_list",
      "changes_read",
      "db_query",
      "fs_read",
      "fs_search",
      "memory_recall",
      "vault_list",
      "kv_get",
      "kv_list",
      "storage_list",
      "storage_read",
    ];
    expect(where("readOnlyHint")).toEqual(reads);
    expect(where("destructiveHint")).toEqual([
      "primitive_snapshot", // restore replaces the data
      "db_exec",
      "db_branch", // promote, delete
      "fs_write",
      "queue_ack", // ack removes the job, purge
      "memory_forget",
      "vault_use", // an outbound request may do anything
      "kv_set", // overwrites
      "kv_delete",
      "storage_write",
      "storage_sign", // revoke ends every signed URL
    ]);
    expect(where("idempotentHint")).toEqual([...reads.slice(0, 9), "kv_delete", ...reads.slice(9), "storage_write"]);
    expect(where("openWorldHint")).toEqual(["vault_use"]);
    for (const tool of TOOLS) expect(toolAnnotations(tool).title, tool.name).toBe(tool.title);
  });

  it("a tool follows its operations: one declared otherwise is refused, a changed operation changes the tool", () => {
    const sign = { ...byName("storage_sign"), access: "read" } as ToolSpec;
    const get = { ...byName("kv_get"), access: "write" } as ToolSpec;
    expect(() => checkToolAccess([sign, get])).toThrow(
      "storage_sign is declared read but its operations write; kv_get is declared write but its operations only read",
    );
    const effects = {
      ...OPERATION_EFFECTS,
      "kv.get": { access: "write" as const, destructive: true, idempotent: false },
    };
    expect(derivedAccess(byName("kv_get"), effects)).toBe("write");
    expect(toolAnnotations(byName("kv_get"), effects)).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(() => checkToolAccess(TOOLS, effects)).toThrow("kv_get is declared read but its operations write");
    // A writing operation that does not say whether it destroys: no hints can be derived.
    const vague = { ...OPERATION_EFFECTS, "kv.set": { access: "write" as const } };
    expect(() => toolAnnotations(byName("kv_set"), vague)).toThrow("kv.set writes but does not say");
  });

  it("tools/list shows every tool with its output schema and derived annotations (the SDK client)", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    for (const listed of tools) {
      const tool = byName(listed.name);
      expect(listed.annotations, listed.name).toEqual(toolAnnotations(tool));
      expect(listed.outputSchema, listed.name).toEqual(toolOutputSchema(tool));
      expect(listed.outputSchema?.type, listed.name).toBe("object");
      // Unknown arguments are refused, and the schema says so.
      expect(listed.inputSchema.additionalProperties, listed.name).toBe(false);
    }
  });
});

describe("the key tools (key_mint, key_list, key_revoke: the cloud's, over a host's KeyManager)", () => {
  it("are annotated from @prim/wire's KEY_TOOL_CATALOG: mint writes anew, revoke destroys and repeats, list reads", () => {
    expect(KEY_TOOLS.map((tool) => tool.name)).toEqual(KEY_TOOL_CATALOG.map((tool) => tool.name));
    const hints = Object.fromEntries(KEY_TOOLS.map((tool) => [tool.name, keyToolAnnotations(tool)]));
    expect(hints).toEqual({
      key_mint: {
        title: "Mint a narrower key",
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      key_list: {
        title: "List minted keys",
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      key_revoke: {
        title: "Revoke a minted key",
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    });
    // Not on the consent screen's list: an OAuth token may never use them.
    const catalog = new Set<string>(TOOL_CATALOG.map((tool) => tool.name));
    expect(KEY_TOOLS.filter((tool) => catalog.has(tool.name))).toEqual([]);
  });

  it("do not exist on the local engine (no keys): not listed, and a call names an unknown tool", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    expect((await client.listTools()).tools.some((tool) => tool.name.startsWith("key_"))).toBe(false);
    await expect(client.callTool({ name: "key_mint", arguments: {} })).rejects.toThrow("Tool key_mint not found");
    // The same session's own tools answer.
    expect((await client.callTool({ name: "primitive_list", arguments: {} })).isError).toBeFalsy();
  });
});
