// changes_read over Streamable HTTP: one primitive's feed, the group's merged feed, resuming,
// and a refused cursor — with the structured result checked against the tool's output schema.
import { expect, it } from "vitest";
import { forEachInvoker, withStore } from "./helpers.js";

forEachInvoker("MCP tools: changes_read", () => {
  it("reads a primitive's feed and the group's, resumes from a cursor, never shows a value", async () => {
    const { s, client, ok } = await withStore("kv");
    await ok("primitive_create", { name: "files", type: "fs" });
    await ok("kv_set", { primitive: "store", key: "a", value: "secret-ish value" });
    await ok("kv_set", { primitive: "store", key: "b", value: 2 });
    await ok("fs_write", { primitive: "files", path: "/x.txt", content: "hi" });

    const first = await ok("changes_read", { primitive: "store", limit: 1 });
    expect(first.data.map((e: { op: string; key: string }) => [e.op, e.key])).toEqual([["set", "a"]]);
    expect(JSON.stringify(first)).not.toContain("secret-ish");
    const rest = await ok("changes_read", { primitive: "store", after: first.cursor });
    expect(rest.data.map((e: { key: string }) => e.key)).toEqual(["b"]);

    const group = await ok("changes_read", {});
    expect(group.data.map((e: { key?: string; path?: string }) => e.key ?? e.path)).toEqual(["a", "b", "/x.txt"]);
    const none = await ok("changes_read", { after: group.cursor });
    expect(none.data).toEqual([]);

    const bad = await s.call(client, "changes_read", { primitive: "store", after: "forged" });
    expect(bad).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
  });
});
