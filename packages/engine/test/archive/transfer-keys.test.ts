import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import type { GroupArchive, ImportResult, ImportStatus, Principal } from "@prim/wire";
import { afterEach, describe, expect, it } from "vitest";
import { Cell } from "../../src/cell.js";
import { Engine } from "../../src/engine.js";
import { tempDir } from "../helpers.js";
import { API_KEY, injected, seedEverything, TOKEN, useLoopbackUpstream } from "./fixtures.js";

/**
 * Transfer keys are per workspace (issue 35, item 1). Two workspaces on one cell — as the cloud
 * runs them, one master key for the whole deployment — must not be able to open each other's
 * archives: before, the cell handed every workspace the one key its master key derived, so A
 * imported B's archive and re-exported B's secrets to a key of A's choosing. A workspace keeps
 * its key on another cell of the same deployment (moves and rebuilds carry nothing).
 */

const upstream = useLoopbackUpstream();
const cells: Cell[] = [];
afterEach(async () => {
  for (const cell of cells.splice(0)) await cell.close();
});

const owner = (workspace: string): Principal => ({
  kind: "account",
  workspace,
  actor: `key:${workspace}`,
  groupId: null,
  tools: null,
});

/** A cell of a deployment whose master key is `master`, serving `workspaces`. */
function cellOf(master: Buffer, ...workspaces: string[]) {
  const cell = Cell.openLocal({ dataDir: tempDir(), masterKey: master, allowLoopbackFetch: true });
  cells.push(cell);
  return workspaces.map((w) => {
    const own = Engine.forWorkspace(cell, w);
    // The shared fixtures call as the local principal; here every call is the workspace owner's.
    const engine = {
      invoke: (_: Principal, op: string, target: string | null, input: unknown) =>
        own.invoke(owner(w), op, target, input),
    } as Engine;
    const call = <T = unknown>(op: string, target: string | null, input: unknown = {}) =>
      engine.invoke<T>(owner(w), op, target, input);
    const recipient = async () => (await call<ImportStatus>("group.import_status", null, { group: "app" })).recipient;
    const exportGroup = async (group: string, recipient?: string) => {
      const { archive } = await call<GroupArchive>("group.export", group, recipient === undefined ? {} : { recipient });
      return { sha256: archive.sha256, bytes: readFileSync(archive.path) };
    };
    const importGroup = (group: string, archive: { bytes: Buffer; sha256: string }) =>
      call<ImportResult>("group.import", null, { group, body: Readable.from([archive.bytes]), sha256: archive.sha256 });
    return { engine, call, recipient, exportGroup, importGroup };
  });
}

describe("transfer keys: one per workspace", () => {
  it("refuses B's archive in A on the same cell (400 naming both keys), while B imports it and its secrets work", async () => {
    const [a, b] = cellOf(randomBytes(32), "ws_a", "ws_b") as [
      ReturnType<typeof cellOf>[0],
      ReturnType<typeof cellOf>[0],
    ];
    const seeded = await seedEverything(b.engine);
    const archive = await b.exportGroup("app");
    const [keyA, keyB] = [await a.recipient(), await b.recipient()];
    expect(keyA).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(keyA).not.toBe(keyB);

    // The attack: A imports B's file (to re-export it for a key of A's own). Refused, nothing made.
    await expect(a.importGroup("stolen", archive)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining(`sealed for transfer key ${keyB}, not this workspace's (${keyA})`),
    });
    await expect(a.call("group.get", "stolen")).rejects.toMatchObject({ code: "not_found" });

    // The rightful workspace imports the same bytes, and the secrets inject as before.
    const result = await b.importGroup("copy", archive);
    const vault = result.imported.find((p) => p.type === "vault");
    expect(vault?.source_id).toBe(seeded.vault.id);
    const digests = await injected(b.engine, vault?.id as string, upstream);
    expect(digests).toEqual(await injected(b.engine, seeded.vault.id, upstream));
    expect(digests.authorization).not.toBe(digests.api_key);
    expect([TOKEN, API_KEY].some((s) => JSON.stringify(digests).includes(s))).toBe(false);
  });

  it("gives a workspace the same key on every cell of a deployment, and another deployment another", async () => {
    const master = randomBytes(32);
    const [here] = cellOf(master, "ws_moving");
    const [there, neighbour] = cellOf(master, "ws_moving", "ws_other");
    const [elsewhere] = cellOf(randomBytes(32), "ws_moving");
    const key = await here?.recipient();
    expect(await there?.recipient()).toBe(key);
    expect(await neighbour?.recipient()).not.toBe(key);
    expect(await elsewhere?.recipient()).not.toBe(key);

    // An archive sealed on one cell opens on the other (what a move or a rebuild relies on).
    await seedEverything(here?.engine as Engine);
    const archive = await here?.exportGroup("app");
    const result = await there?.importGroup("app", archive as { bytes: Buffer; sha256: string });
    expect(result?.imported.map((p) => p.type).sort()).toEqual([
      "db",
      "fs",
      "kv",
      "memory",
      "queue",
      "storage",
      "vault",
    ]);
  });
});
