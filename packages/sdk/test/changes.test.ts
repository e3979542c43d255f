import { describe, expect, it, vi } from "vitest";
import type { ChangeEntry } from "../src/index.js";
import { startSdkServer } from "./server.js";

describe("prim.changes", () => {
  it("iterates a primitive's changes as they commit and resumes from the last entry's cursor", async () => {
    const { client, engine, primitive } = await startSdkServer();
    const id = await primitive("kv");
    const kv = client.kv(id);
    await kv.set("a", 1);
    await kv.set("b", 2);
    const controller = new AbortController();
    const seen: ChangeEntry[] = [];
    const reading = (async () => {
      for await (const change of client.changes({ primitive: id }, { signal: controller.signal })) {
        seen.push(change);
        if (seen.length === 3) controller.abort();
      }
    })();
    // The iterator has read a and b and is parked in a long poll: a write wakes it.
    await vi.waitFor(() => expect(engine.services.files.changeSignals.waiting).toBe(1), { timeout: 10_000 });
    await kv.delete("a");
    await reading;
    expect(seen.map((e) => [e.op, e.key])).toEqual([
      ["set", "a"],
      ["set", "b"],
      ["delete", "a"],
    ]);

    await kv.set("c", 3);
    const page = await client.readChanges({ primitive: id }, { after: seen[2]?.cursor as string });
    expect(page.data.map((e) => e.key)).toEqual(["c"]);
  });

  it("reads a group's feed, each entry naming its primitive's type, and refuses a made-up cursor (400)", async () => {
    const { client, primitive } = await startSdkServer();
    const kv = await primitive("kv");
    const fs = await primitive("fs");
    await client.kv(kv).set("k", 1);
    await client.fs(fs).write("/f.txt", "x");
    const page = await client.readChanges({ group: "app" });
    expect(page.data.map((e) => e.type)).toEqual(["kv", "fs"]);
    await expect(client.readChanges({ group: "app" }, { after: "junk" })).rejects.toMatchObject({
      status: 400,
      code: "invalid_request",
    });
  });
});
