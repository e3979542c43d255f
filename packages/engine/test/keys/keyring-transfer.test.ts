import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { LocalKeyRing } from "../../src/keys/keyring.js";

const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "prim-keyring-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("moving a workspace's vault keys between cells", () => {
  it("exports a group's wrapped keys and imports them where the same master key unwraps them", () => {
    const master = randomBytes(32);
    const source = new LocalKeyRing(dir(), systemClock, master);
    const target = new LocalKeyRing(dir(), systemClock, master);
    const key = source.groupKey("grp_a");
    source.groupKey("grp_other");
    const exported = source.exportWrapped(["grp_a"]);
    expect(exported.map((k) => k.groupId)).toEqual(["grp_a"]);
    expect(JSON.stringify(exported)).not.toContain(key.key.toString("base64"));
    target.importWrapped(exported);
    target.importWrapped(exported); // idempotent
    expect(target.key(key.id).key.equals(key.key)).toBe(true);
    // New values of the group keep using the moved key on the new cell.
    expect(target.groupKey("grp_a").id).toBe(key.id);
    source.close();
    target.close();
  });

  it("refuses keys another master key wrapped, adding none", () => {
    const source = new LocalKeyRing(dir(), systemClock, randomBytes(32));
    const target = new LocalKeyRing(dir(), systemClock, randomBytes(32));
    const key = source.groupKey("grp_a");
    expect(() => target.importWrapped(source.exportWrapped(["grp_a"]))).toThrow(/PRIM_MASTER_KEY/);
    expect(() => target.key(key.id)).toThrow();
    source.close();
    target.close();
  });
});
