// `InvokeMeta.system` (a platform service acting for the workspace in the same process: the
// cloud's webhook dispatcher reading change feeds): the call passes the engine's scoping as
// always but is neither limited, counted nor audited. The same read without it is all three.
import type { PrimitiveInfo, Principal } from "@prim/wire";
import { afterEach, describe, expect, it } from "vitest";
import { Cell } from "../src/cell.js";
import { ManualClock } from "../src/core/clock.js";
import { Engine } from "../src/engine.js";
import type { LimitCall, Limiter } from "../src/limits.js";
import { tempDir } from "./helpers.js";

const open: Cell[] = [];
afterEach(async () => {
  for (const cell of open.splice(0)) await cell.close();
});

const owner: Principal = { kind: "account", workspace: "ws_a", actor: "key:a", groupId: null, tools: null };

describe("system calls", () => {
  it("are neither limited nor audited; the same call from a credential is both", async () => {
    const cell = Cell.openLocal({ dataDir: tempDir(), clock: new ManualClock(1_800_000_000_000) });
    open.push(cell);
    const admitted: string[] = [];
    const limiter: Limiter = {
      admit: async (call: LimitCall) => {
        admitted.push(call.op.name);
        return undefined;
      },
    };
    const engine = Engine.forWorkspace(cell, "ws_a", { limiter });
    await engine.invoke(owner, "group.create", null, { name: "app" });
    const kv = await engine.invoke<PrimitiveInfo>(owner, "primitive.create", null, {
      name: "c",
      type: "kv",
      group: "app",
    });
    await engine.invoke(owner, "kv.set", kv.id, { key: "k", value: 1 });
    admitted.length = 0;
    const audited = async () =>
      (await engine.invoke<{ data: { action: string }[] }>(owner, "audit.list", null, { limit: 100 })).data.filter(
        (e) => e.action === "changes.read",
      ).length;
    const page = await engine.invoke<{ data: unknown[] }>(owner, "changes.read", kv.id, {}, { system: true });
    expect(page.data).toHaveLength(1);
    expect(admitted).toEqual([]);
    await engine.invoke(owner, "changes.read", kv.id, {});
    expect(admitted).toContain("changes.read");
    await new Promise((r) => setTimeout(r, 50)); // the audit buffer's flush
    expect(await audited()).toBe(1);
    // Scoping still holds: a system call as another group's key is refused as ever.
    const scoped: Principal = { ...owner, kind: "scoped", groupId: "grp_00000000000000000000000000" };
    await expect(engine.invoke(scoped, "changes.read", kv.id, {}, { system: true })).rejects.toMatchObject({
      code: expect.stringMatching(/not_found|group_mismatch|forbidden/),
    });
  });
});
