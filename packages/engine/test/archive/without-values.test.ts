import { readFileSync } from "node:fs";
import type { Page, Principal, SecretListing } from "@prim/wire";
import { LOCAL_PRINCIPAL } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { END_OF_ARCHIVE, padding, tarHeader } from "../../src/archive/tar.js";
import { Cell } from "../../src/cell.js";
import { ManualClock } from "../../src/core/clock.js";
import { Engine } from "../../src/engine.js";
import { tempDir, testEngine } from "../helpers.js";
import { call, exportFor, importInto, manifestOf, recipientOf, sha256, tarEntries } from "./fixtures.js";

/**
 * Group archives without vault values (issue 35, item 3) at the engine: an engine given a
 * secret-export policy (the cloud's) that refuses exports vault names, versions and grants for
 * another key but values for its own; the importer marks such secrets as needing a value; an
 * archive claiming no values while holding sealed ones is corrupt (400), never a 500. The local
 * engine (no policy) exporting values for another key is round-trip.test.ts.
 */

const WORKSPACE = "ws_policy";
const principal: Principal = { ...LOCAL_PRINCIPAL, kind: "account", workspace: WORKSPACE, actor: "key:k1" };

/** One workspace's engine on a cell whose policy says `allowed`, holding vault `secrets` in group `app`. */
async function policyEngine(allowed: boolean) {
  const cell = Cell.openLocal({ dataDir: tempDir(), clock: new ManualClock(1_800_000_000_000) });
  const asked: Principal[] = [];
  const engine = Engine.forWorkspace(cell, WORKSPACE, {
    secretExport: {
      allows: async (p) => {
        asked.push(p);
        return allowed;
      },
    },
  });
  const run = <T>(op: string, target: string | null, input: unknown = {}) =>
    engine.invoke<T>(principal, op, target, input);
  await run("group.create", null, { name: "app" });
  const vault = await run<{ id: string }>("primitive.create", null, { name: "secrets", type: "vault", group: "app" });
  await run("vault.put", vault.id, { name: "TOKEN", value: "tok_secret_value" });
  await run("vault.grant", vault.id, { name: "TOKEN", allow: { hosts: ["127.0.0.1"] } });
  const close = async () => {
    await engine.close();
    await cell.close();
  };
  return { engine, run, asked, close };
}

const secretsOf = (engine: Engine, id: string) =>
  engine.invoke<Page<SecretListing>>(LOCAL_PRINCIPAL, "vault.list", id, {}).then((p) => p.data);

describe("group archives without vault values", () => {
  it("exports names, versions and grants for another key when the policy refuses; values for its own key", async () => {
    const other = testEngine();
    const cloud = await policyEngine(false);
    try {
      const recipient = await recipientOf(other.engine);
      const { archive } = await cloud.run<{ archive: { path: string } }>("group.export", "app", { recipient });
      expect(cloud.asked).toEqual([principal]);
      const bytes = readFileSync(archive.path);
      expect(manifestOf(bytes).vault).toBeNull();
      const imported = await importInto(other.engine, "copy", bytes, sha256(bytes));
      const vault = imported.imported.find((p) => p.type === "vault")?.id as string;
      expect(await secretsOf(other.engine, vault)).toEqual([
        expect.objectContaining({ name: "TOKEN", version: 1, needs_value: true, grant: expect.anything() }),
      ]);
      await expect(
        call(other.engine, "vault.fetch", vault, { url: "http://127.0.0.1:9/", auth: { bearer: "TOKEN" } }),
      ).rejects.toMatchObject({ code: "conflict", status: 409 });
      await call(other.engine, "vault.put", vault, { name: "TOKEN", value: "new" });
      expect(await secretsOf(other.engine, vault)).toEqual([
        expect.objectContaining({ name: "TOKEN", version: 2, needs_value: false }),
      ]);

      // Its own key: the values go (only this workspace can open them), without asking.
      const own = await cloud.run<{ archive: { path: string } }>("group.export", "app", {});
      expect(manifestOf(readFileSync(own.archive.path)).vault).not.toBeNull();
      expect(cloud.asked).toHaveLength(1);
    } finally {
      await cloud.close();
    }
  });

  it("carries values for another key when the policy allows", async () => {
    const other = testEngine();
    const cloud = await policyEngine(true);
    try {
      const recipient = await recipientOf(other.engine);
      const { archive } = await cloud.run<{ archive: { path: string } }>("group.export", "app", { recipient });
      const bytes = readFileSync(archive.path);
      expect(manifestOf(bytes).vault).toMatchObject({ recipient });
      const imported = await importInto(other.engine, "copy", bytes, sha256(bytes));
      const vault = imported.imported.find((p) => p.type === "vault")?.id as string;
      expect((await secretsOf(other.engine, vault))[0]).toMatchObject({ needs_value: false });
    } finally {
      await cloud.close();
    }
  });

  it("refuses (400) an archive whose manifest drops the vault key while its secrets stay sealed", async () => {
    const { engine } = testEngine();
    await call(engine, "group.create", null, { name: "app" });
    const vault = await call<{ id: string }>(engine, "primitive.create", null, {
      name: "secrets",
      type: "vault",
      group: "app",
    });
    await call(engine, "vault.put", vault.id, { name: "TOKEN", value: "tok" });
    const { bytes } = await exportFor(engine, "app");
    // The manifest (last entry) again, with `vault: null`: every other entry is untouched.
    const entry = tarEntries(bytes).find((e) => e.name === "prim-archive.json");
    if (entry === undefined) throw new Error("no manifest");
    const manifest = Buffer.from(JSON.stringify({ ...manifestOf(bytes), vault: null }));
    const forged = Buffer.concat([
      bytes.subarray(0, entry.offset - 512),
      tarHeader("prim-archive.json", manifest.length, 0),
      manifest,
      padding(manifest.length),
      END_OF_ARCHIVE,
    ]);
    await expect(importInto(engine, "forged", forged, sha256(forged))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("does not decrypt"),
    });
    // The rightful archive imports.
    const ok = await importInto(engine, "restored", bytes, sha256(bytes));
    expect(ok.imported).toHaveLength(1);
  });
});
