import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import type { GroupArchive, ImportStatus, Page, PrimitiveInfo, Principal } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { END_OF_ARCHIVE, padding, tarHeader } from "../../src/archive/tar.js";
import { testEngine } from "../helpers.js";
import {
  call,
  create,
  exportFor,
  flipped,
  importInto,
  leftovers,
  manifestOf,
  recipientOf,
  STORAGE_BIG,
  seedEverything,
  sha256,
  type TestEngine,
  tarEntries,
  twoEngines,
} from "./fixtures.js";

/**
 * Group archives refused, and who may ask: an archive sealed for another engine's key, damaged
 * anywhere (a flipped byte, a cut, a forged manifest, the wrong sha256) writes nothing on the
 * importing engine; scoped principals are forbidden all three operations; unknown archives and
 * bad ids or recipients are answered 404 and 400. Everything runs for real on local engines.
 */

describe("group archives: refused archives write nothing", () => {
  /** B with data of its own (group `keep`), and an archive of A's `app` sealed for B. */
  async function setup() {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    await call(b.engine, "group.create", null, { name: "keep" });
    const kept = await create(b.engine, "keep", "cache", "kv");
    await call(b.engine, "kv.set", kept.id, { key: "mine", value: { v: 1 } });
    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    const untouched = async () => {
      await expect(call(b.engine, "group.get", "app")).rejects.toMatchObject({ code: "not_found" });
      const all = await call<Page<PrimitiveInfo>>(b.engine, "primitive.list", null, {});
      expect(all.data.map((p) => p.id)).toEqual([kept.id]);
      expect(await call(b.engine, "kv.get", kept.id, { key: "mine" })).toMatchObject({ value: { v: 1 }, version: 1 });
      expect(leftovers(b.dataDir)).toEqual([]);
    };
    return { a, b, archive, untouched };
  }

  const noUpload = async (b: TestEngine, sha: string) =>
    expect(
      (await call<ImportStatus>(b.engine, "group.import_status", null, { group: "app", sha256: sha })).upload,
    ).toEqual({
      sha256: sha,
      received: 0,
    });

  it("refuses an archive sealed for another engine's key (400), B unchanged", async () => {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    const archive = await exportFor(a.engine, "app"); // sealed for A itself
    await expect(importInto(b.engine, "app", archive.bytes, archive.sha256)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining(`export again with recipient=${await recipientOf(b.engine)}`),
    });
    await expect(call(b.engine, "group.get", "app")).rejects.toMatchObject({ code: "not_found" });
    expect((await call<Page<PrimitiveInfo>>(b.engine, "primitive.list", null, {})).data).toEqual([]);
    await noUpload(b, archive.sha256);
    expect(leftovers(b.dataDir)).toEqual([]);
  });

  it("refuses a flipped byte inside a blob entry (its sha256 checked, not only the file's)", async () => {
    const { b, archive, untouched } = await setup();
    const blob = tarEntries(archive.bytes).find((e) => e.name === `blobs/${sha256(STORAGE_BIG)}`);
    if (blob === undefined) throw new Error("no blob entry");
    const damaged = flipped(archive.bytes, blob.offset + Math.floor(blob.size / 2), 0x01);
    await expect(importInto(b.engine, "app", damaged, sha256(damaged))).rejects.toMatchObject({
      code: "invalid_request",
      message: `archive is corrupt: entry '${blob.name}' does not match its sha256; nothing was imported`,
    });
    await noUpload(b, sha256(damaged));
    await untouched();
  });

  it("refuses a flipped byte inside a primitive's file and inside a header", async () => {
    const { b, archive, untouched } = await setup();
    const entries = tarEntries(archive.bytes);
    const file = entries.find((e) => e.name.endsWith("-kv.sqlite"));
    if (file === undefined) throw new Error("no kv entry");
    const inFile = flipped(archive.bytes, file.offset + Math.floor(file.size / 2), 0x80);
    await expect(importInto(b.engine, "app", inFile, sha256(inFile))).rejects.toMatchObject({
      code: "invalid_request",
      message: `archive is corrupt: entry '${file.name}' does not match its sha256; nothing was imported`,
    });
    const inHeader = flipped(archive.bytes, file.offset - 512 + 3, 0x01); // in the kv entry's name
    await expect(importInto(b.engine, "app", inHeader, sha256(inHeader))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*checksum.*; nothing was imported$/),
    });
    await untouched();
  });

  type Layout = { size: number; blobAt: number; fileAt: number };
  it.each([
    ["inside the big blob", ({ blobAt }: Layout) => blobAt + 1000],
    ["inside a primitive's file", ({ fileAt }: Layout) => fileAt + 700],
    ["before the end marker", ({ size }: Layout) => size - 1024],
    ["mid-header", ({ blobAt }: Layout) => blobAt - 300],
  ])("refuses an archive truncated %s (400), nothing left behind", async (_where, cutAt) => {
    const { b, archive, untouched } = await setup();
    const entries = tarEntries(archive.bytes);
    const blob = entries.find((e) => e.name === `blobs/${sha256(STORAGE_BIG)}`);
    const file = entries.find((e) => e.name.endsWith("-db.sqlite"));
    if (blob === undefined || file === undefined) throw new Error("entries missing");
    const cut = archive.bytes.subarray(0, cutAt({ size: archive.size, blobAt: blob.offset, fileAt: file.offset }));
    await expect(importInto(b.engine, "app", cut, sha256(cut))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*truncated.*; nothing was imported$/),
    });
    await noUpload(b, sha256(cut));
    await untouched();
  });

  it("refuses an entry its manifest does not list, and a manifest naming one primitive twice (400)", async () => {
    const { b, archive, untouched } = await setup();
    const entries = tarEntries(archive.bytes);
    const bytesOf = (e: { offset: number; size: number }) => archive.bytes.subarray(e.offset, e.offset + e.size);
    const manifest = manifestOf(archive.bytes);
    const entry = (name: string, body: Buffer) => [tarHeader(name, body.length, 0), body, padding(body.length)];
    /** The archive rebuilt from its entries, with `extra` before the manifest and the manifest replaced. */
    const rebuilt = (extra: Buffer[], forged: object) => {
      const parts = entries.filter((e) => e.name !== "prim-archive.json").flatMap((e) => entry(e.name, bytesOf(e)));
      return Buffer.concat([
        ...parts,
        ...extra,
        ...entry("prim-archive.json", Buffer.from(JSON.stringify(forged))),
        END_OF_ARCHIVE,
      ]);
    };
    // The rebuilt archive as it is imports (so what follows is refused for its one change).
    const smuggled = Buffer.from("not listed anywhere");
    const withExtra = rebuilt(entry(`blobs/${sha256(smuggled)}`, smuggled), manifest);
    await expect(importInto(b.engine, "app", withExtra, sha256(withExtra))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*; nothing was imported$/),
    });
    const kv = manifest.primitives.find((p: { type: string }) => p.type === "kv");
    const twice = rebuilt([], { ...manifest, primitives: [...manifest.primitives, { ...kv }] });
    await expect(importInto(b.engine, "app", twice, sha256(twice))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*twice.*; nothing was imported$/),
    });
    await untouched();
    const intact = rebuilt([], manifest);
    expect((await importInto(b.engine, "app", intact, sha256(intact))).imported).toHaveLength(7);
  });

  it("refuses a body whose sha256 is not the one named (400) and keeps none of it", async () => {
    const { b, archive, untouched } = await setup();
    const wrong = sha256("something else");
    await expect(importInto(b.engine, "app", archive.bytes, wrong)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining(`the archive's sha256 is ${archive.sha256}, not ${wrong}`),
    });
    await noUpload(b, wrong);
    await noUpload(b, archive.sha256);
    await untouched();
    // The intact archive still imports afterwards.
    const result = await importInto(b.engine, "app", archive.bytes, archive.sha256);
    expect(result.imported).toHaveLength(7);
  });
});

describe("group archives: access", () => {
  it("refuses scoped principals (403 forbidden) on all three operations", async () => {
    const { engine } = testEngine();
    const group = await call<{ id: string }>(engine, "group.create", null, { name: "app" });
    const scoped: Principal = { kind: "scoped", workspace: "local", actor: "key:k", groupId: group.id, tools: null };
    const archive = await call<GroupArchive>(engine, "group.export", "app", {});
    const body = readFileSync(archive.archive.path);
    const calls: [string, string | null, unknown][] = [
      ["group.export", "app", {}],
      ["group.import_status", null, { group: "app" }],
      ["group.import", null, { group: "app", body: Readable.from([body]), sha256: archive.archive.sha256 }],
    ];
    for (const [op, target, input] of calls) {
      await expect(engine.invoke(scoped, op, target, input)).rejects.toMatchObject({ code: "forbidden" });
    }
    // whoami answers either, naming what it is.
    expect(await call(engine, "auth.whoami", null)).toEqual({
      workspace: "local",
      workspace_name: null,
      actor: "local",
      kind: "local",
      group: null,
      tools: null,
      read_only: false,
    });
    expect(await engine.invoke(scoped, "auth.whoami", null, {})).toEqual({
      workspace: "local",
      workspace_name: null,
      actor: "key:k",
      kind: "scoped",
      group: { id: group.id, name: "app" },
      tools: null,
      read_only: false,
    });
  });

  it("answers 404 for an archive of another group or one that does not exist, 400 for bad ids and recipients", async () => {
    const { engine } = testEngine();
    await call(engine, "group.create", null, { name: "app" });
    await call(engine, "group.create", null, { name: "other" });
    const other = await call<GroupArchive>(engine, "group.export", "other", {});
    await expect(call(engine, "group.export", "app", { archive: other.archive.id })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(call(engine, "group.export", "app", { archive: `arc_${"0".repeat(26)}` })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(call(engine, "group.export", "nope", {})).rejects.toMatchObject({ code: "not_found" });
    await expect(call(engine, "group.export", "app", { archive: "arc_../../etc" })).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(call(engine, "group.export", "app", { recipient: "not-a-key" })).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("recipient"),
    });
    await expect(call(engine, "group.import_status", null, { group: "app", sha256: "ABC" })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});
