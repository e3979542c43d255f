import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { testEngine } from "../helpers.js";

describe("PrimitiveFiles", () => {
  it("keeps at most maxOpenFiles handles open and reopens evicted ones transparently", async () => {
    const { engine } = testEngine({ maxOpenFiles: 2 });
    await engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "g" });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const p = await engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
        name: `kv${i}`,
        type: "kv",
        group: "g",
      });
      await engine.invoke(LOCAL_PRINCIPAL, "kv.set", p.id, { key: "i", value: i });
      ids.push(p.id);
    }
    const files = engine.services.files;
    expect(files.openCount).toBe(2);
    for (const [i, id] of ids.entries()) {
      await expect(engine.invoke(LOCAL_PRINCIPAL, "kv.get", id, { key: "i" })).resolves.toMatchObject({ value: i });
    }
    expect(files.openCount).toBe(2);
  });
});
