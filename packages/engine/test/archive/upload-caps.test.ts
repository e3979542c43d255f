import { existsSync, readdirSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import type { ImportStatus } from "@prim/wire";
import { describe, expect, it, vi } from "vitest";
import {
  MAX_CONCURRENT_UPLOADS,
  MAX_KEPT_UPLOADS,
  MAX_PENDING_UPLOAD_BYTES,
  UPLOAD_RETRY_AFTER_S,
} from "../../src/ops/import-uploads.js";
import { testEngine } from "../helpers.js";
import { call, create, exportFor, importInto, sha256 } from "./fixtures.js";

/**
 * Issue 35, item 17: one workspace's archive uploads are capped — at most
 * MAX_CONCURRENT_UPLOADS written at once, at most MAX_PENDING_UPLOAD_BYTES held by unfinished
 * uploads (429 `rate_limited` with `Retry-After` past either; idle abandoned uploads are
 * discarded first to make room), at most MAX_KEPT_UPLOADS kept — and the bytes they hold count
 * in the workspace's storage gauge. Each refusal is followed by the rightful import succeeding.
 */

/** An engine with a small group `app` exported for itself (the archive to import). */
async function setup() {
  const t = testEngine();
  await call(t.engine, "group.create", null, { name: "app" });
  const kv = await create(t.engine, "app", "cache", "kv");
  await call(t.engine, "kv.set", kv.id, { key: "k", value: { n: 1 } });
  const archive = await exportFor(t.engine, "app");
  const imports = join(t.dataDir, "imports");
  const partOf = (group: string, sha: string) => join(imports, `${group}.${sha}.part`);
  /** An upload left in flight: its body stays open until the test ends it. */
  const inFlight = async (group: string, sha = sha256(group)) => {
    const body = new PassThrough();
    const importing = importInto(t.engine, group, body, sha);
    importing.catch(() => undefined); // ended by the test; its refusal is not the point
    await vi.waitFor(() => expect(existsSync(partOf(group, sha))).toBe(true));
    return { body, importing, part: partOf(group, sha), sha };
  };
  return { ...t, archive, imports, partOf, inFlight };
}

const received = async (engine: ReturnType<typeof testEngine>["engine"], group: string, sha: string) =>
  (await call<ImportStatus>(engine, "group.import_status", null, { group, sha256: sha })).upload?.received;

describe("archive uploads: capped per workspace", () => {
  it(`refuses a ${MAX_CONCURRENT_UPLOADS + 1}th concurrent upload (429 with Retry-After); once one ends, it imports`, async () => {
    const { engine, archive, inFlight } = await setup();
    const running = [];
    for (let i = 0; i < MAX_CONCURRENT_UPLOADS; i++) running.push(await inFlight(`up${i}`));
    const refused = importInto(engine, "copy", archive.bytes, archive.sha256);
    await expect(refused).rejects.toMatchObject({
      code: "rate_limited",
      status: 429,
      headers: { "Retry-After": String(UPLOAD_RETRY_AFTER_S) },
      message: expect.stringContaining(`already has ${MAX_CONCURRENT_UPLOADS} archive uploads in progress`),
    });
    // A takeover of an upload in progress is not a new one: it is let in.
    const first = running[0] as Awaited<ReturnType<typeof inFlight>>;
    const takeoverBody = new PassThrough();
    importInto(engine, "up0", takeoverBody, first.sha).catch(() => undefined);
    await expect(first.importing).rejects.toMatchObject({ code: "conflict" });
    // One ends (its client went away): the refused archive now imports.
    const second = running[1] as Awaited<ReturnType<typeof inFlight>>;
    second.body.destroy(new Error("client went away"));
    await expect(second.importing).rejects.toThrow("client went away");
    const result = await importInto(engine, "copy", archive.bytes, archive.sha256);
    expect(result.imported.map((p) => p.name)).toEqual(["cache"]);
    for (const body of [takeoverBody, ...running.map((r) => r.body)]) body.destroy(new Error("test over"));
  });

  it("refuses an upload past the pending bytes that uploads in progress hold (429); an abandoned one makes room", async () => {
    const { engine, archive, inFlight } = await setup();
    const gaugeBefore = await engine.storageBytes();
    const big = await inFlight("big");
    // The upload in progress holds nearly the whole cap (a sparse file stands for its bytes).
    const held = MAX_PENDING_UPLOAD_BYTES - 1000;
    truncateSync(big.part, held);
    expect(archive.size).toBeGreaterThan(1000);
    // The storage gauge counts what unfinished uploads hold.
    expect(await engine.storageBytes()).toBeGreaterThanOrEqual(gaugeBefore + held);
    await expect(importInto(engine, "copy", archive.bytes, archive.sha256)).rejects.toMatchObject({
      code: "rate_limited",
      status: 429,
      headers: { "Retry-After": String(UPLOAD_RETRY_AFTER_S) },
      message: expect.stringContaining(`archive uploads in progress hold ${held} bytes`),
    });
    // Its client goes away: the abandoned upload is idle, and is discarded to make room.
    big.body.destroy(new Error("client went away"));
    await expect(big.importing).rejects.toThrow();
    expect(await received(engine, "big", big.sha)).toBe(held);
    const result = await importInto(engine, "copy", archive.bytes, archive.sha256);
    expect(result.imported).toHaveLength(1);
    expect(await received(engine, "big", big.sha)).toBe(0);
    expect(await engine.storageBytes()).toBeLessThan(gaugeBefore + held);
  });

  it(`keeps at most ${MAX_KEPT_UPLOADS} unfinished uploads; a new one discards the oldest idle ones`, async () => {
    const { engine, archive, imports, partOf } = await setup();
    // Abandoned uploads: a first part each, then the client went away.
    const half = archive.bytes.subarray(0, 1024);
    const abandoned: string[] = [];
    for (let i = 0; i < MAX_KEPT_UPLOADS + 2; i++) {
      const sha = sha256(`abandoned ${i}`);
      const body = Readable.from(
        (async function* () {
          yield half;
          throw new Error("client went away");
        })(),
      );
      await expect(importInto(engine, `old${i}`, body, sha)).rejects.toThrow("client went away");
      expect(await received(engine, `old${i}`, sha)).toBe(half.length);
      abandoned.push(partOf(`old${i}`, sha));
    }
    // Each upload that started made room for itself: the newest MAX_KEPT_UPLOADS are kept.
    const kept = () => abandoned.filter((p) => existsSync(p));
    expect(readdirSync(imports)).toHaveLength(MAX_KEPT_UPLOADS);
    expect(kept()).toEqual(abandoned.slice(-MAX_KEPT_UPLOADS));
    // The rightful import: it keeps the newest MAX_KEPT_UPLOADS - 1 besides itself, then finishes.
    const result = await importInto(engine, "copy", archive.bytes, archive.sha256);
    expect(result.imported).toHaveLength(1);
    expect(kept()).toEqual(abandoned.slice(-(MAX_KEPT_UPLOADS - 1)));
  });
});
