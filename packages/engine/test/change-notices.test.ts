// Change notices (services.changes): the operations that change files or objects declare what
// they changed, and `engine.invoke` publishes it once the call succeeded — what MCP resource
// subscriptions hear. The declaring operations are listed here, so a new writing fs or storage
// operation must say what it changes (or be listed as changing no file or object).
import { Readable } from "node:stream";
import { type ChangeNotice, LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { mayWrite } from "../src/primitives/operation.js";
import { SIGNED_URL_PRINCIPAL } from "../src/primitives/storage/signed-ops.js";
import { OPERATIONS } from "../src/registry.js";
import { testEngine } from "./helpers.js";

const DECLARING = [
  "fs.write",
  "fs.delete",
  "fs.mkdir",
  "fs.move",
  "fs.fork",
  "storage.put",
  "storage.delete",
  "storage.copy",
  "storage.signed",
  "primitive.restore",
  "primitive.delete",
];

/** fs and storage operations that may write but change no file or object. */
const CHANGE_NOTHING = ["storage.presign", "storage.revoke"];

describe("change notices", () => {
  it("are declared by every operation that can change a file or object, and only those", () => {
    expect(
      OPERATIONS.filter((op) => op.changes !== undefined)
        .map((op) => op.name)
        .sort(),
    ).toEqual([...DECLARING].sort());
    const writers = OPERATIONS.filter(
      (op) => (op.type === "fs" || op.type === "storage" || op.name.startsWith("storage.")) && mayWrite(op),
    );
    for (const op of writers) {
      expect(op.changes !== undefined || CHANGE_NOTHING.includes(op.name), op.name).toBe(true);
    }
  });

  it("are published after each successful write of a file or object, none for reads, failures or other types", async () => {
    const { engine } = testEngine();
    const seen: ChangeNotice[] = [];
    const others: ChangeNotice[] = [];
    const stop = await engine.services.changes.subscribe("local", (n) => seen.push(n));
    await engine.services.changes.subscribe("elsewhere", (n) => others.push(n));
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const invoke = <T = unknown>(op: string, target: string | null, input: unknown) =>
      engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
    const body = (text: string) => Readable.from([Buffer.from(text)]);
    /** The notices `run` published (run may throw). */
    const during = async (run: () => Promise<unknown>) => {
      seen.length = 0;
      await run().catch(() => {});
      await settle();
      return seen.map(({ workspace, type, path, subtree }) => ({
        workspace,
        type,
        path,
        ...(subtree ? { subtree } : {}),
      }));
    };

    await invoke("group.create", null, { name: "g" });
    const fs = await invoke<PrimitiveInfo>("primitive.create", null, { name: "files", type: "fs", group: "g" });
    const st = await invoke<PrimitiveInfo>("primitive.create", null, { name: "bucket", type: "storage", group: "g" });
    const kv = await invoke<PrimitiveInfo>("primitive.create", null, { name: "cache", type: "kv", group: "g" });
    const file = (path: string, subtree?: boolean) => ({
      workspace: "local",
      type: "fs",
      path,
      ...(subtree ? { subtree } : {}),
    });
    const object = (path: string, subtree?: boolean) => ({
      workspace: "local",
      type: "storage",
      path,
      ...(subtree ? { subtree } : {}),
    });

    expect(await during(() => invoke("fs.write", fs.id, { path: "a//b/./c.txt", body: body("1") }))).toEqual([
      file("/a/b/c.txt"),
    ]);
    expect(seen[0]?.primitive).toBe(fs.id);
    expect(await during(() => invoke("fs.read", fs.id, { path: "/a/b/c.txt" }))).toEqual([]);
    expect(await during(() => invoke("fs.mkdir", fs.id, { path: "/d" }))).toEqual([file("/d")]);
    // A failed write publishes nothing (a file where a directory is).
    expect(await during(() => invoke("fs.write", fs.id, { path: "/a/b", body: body("x") }))).toEqual([]);
    expect(await during(() => invoke("fs.fork", fs.id, { from: "/a", to: "/a2" }))).toEqual([file("/a2", true)]);
    expect(await during(() => invoke("fs.move", fs.id, { from: "/a", to: "/m" }))).toEqual([
      file("/a", true),
      file("/m", true),
    ]);
    expect(await during(() => invoke("fs.delete", fs.id, { path: "/m", recursive: true }))).toEqual([file("/m", true)]);

    expect(await during(() => invoke("storage.put", st.id, { key: "k", body: body("1") }))).toEqual([object("k")]);
    expect(await during(() => invoke("storage.read", st.id, { key: "k" }))).toEqual([]);
    expect(await during(() => invoke("storage.copy", st.id, { from: "k", to: "k2" }))).toEqual([object("k2")]);
    expect(await during(() => invoke("storage.delete", st.id, { key: "k2" }))).toEqual([object("k2")]);
    const put = await invoke<{ url: string }>("storage.presign", st.id, { key: "up", method: "PUT" });
    const token = put.url.slice("/v1/signed/".length);
    const signed = (method: string) =>
      engine.invoke(SIGNED_URL_PRINCIPAL, "storage.signed", null, {
        token,
        method,
        body: body("u"),
        content_length: 1,
      });
    expect(await during(() => signed("PUT"))).toEqual([object("up")]);
    expect(seen[0]?.primitive).toBe(st.id);

    expect(await during(() => invoke("kv.set", kv.id, { key: "k", value: 1 }))).toEqual([]);
    const snap = await invoke<{ id: string }>("primitive.snapshot", fs.id, {});
    expect(await during(() => invoke("primitive.restore", fs.id, { snapshot: snap.id }))).toEqual([file("", true)]);
    expect(await during(() => invoke("primitive.delete", st.id, {}))).toEqual([object("", true)]);

    expect(others).toEqual([]);
    stop();
    expect(await during(() => invoke("fs.write", fs.id, { path: "/after", body: body("1") }))).toEqual([]);
  });
});
