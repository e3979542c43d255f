import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalBlobStore } from "@prim/engine";
import { afterEach, describe, expect, it } from "vitest";
import { copyWorkspace, packWorkspace, unpackWorkspace } from "../src/workspace-archive.js";

/**
 * A workspace's files stay private to the cell's user on the way through a ship or a move
 * (issue 35, item 15): the copy in `.ship/<workspace>` and the unpacked workspace directory are
 * 0700 (they were 0755, so another local user could list a workspace's primitives), files 0600.
 */

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "prim-cell-modes-"));
  temps.push(dir);
  return dir;
};

/** Entries under `dir` (itself included) whose mode is not 0700 for a directory or 0600 for a file. */
function notPrivate(dir: string): string[] {
  return [".", ...readdirSync(dir, { recursive: true, encoding: "utf8" })].flatMap((rel) => {
    const st = statSync(join(dir, rel));
    const mode = (st.mode & 0o777).toString(8);
    return mode === (st.isDirectory() ? "700" : "600") ? [] : [`${rel} ${mode}`];
  });
}

describe("cells: a workspace's files keep private modes through ships and moves", () => {
  it("copies aside into .ship 0700 and unpacks a moved workspace 0700, its files 0600", async () => {
    const cellDir = temp();
    const workspace = join(cellDir, "ws_a");
    mkdirSync(join(workspace, "primitives"), { recursive: true, mode: 0o700 });
    chmodSync(cellDir, 0o700);
    writeFileSync(join(workspace, "catalog.sqlite"), "catalog", { mode: 0o600 });
    writeFileSync(join(workspace, "primitives", "p.sqlite"), "data", { mode: 0o600 });
    chmodSync(workspace, 0o700);

    const aside = join(cellDir, ".ship", "ws_a");
    const copy = await copyWorkspace({ dataDir: workspace, blobDir: null }, aside);
    expect(notPrivate(join(cellDir, ".ship"))).toEqual([]);

    const store = new LocalBlobStore(join(temp(), "blobs"));
    const { key } = await packWorkspace(store, copy, []);
    const target = join(temp(), "cell-b");
    const moved = join(target, "ws_a");
    await unpackWorkspace(store, key, { dataDir: moved, blobDir: null });
    expect(readdirSync(join(moved, "primitives"))).toEqual(["p.sqlite"]);
    expect(notPrivate(moved)).toEqual([]);
  });
});
