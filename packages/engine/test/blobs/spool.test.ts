import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalBlobStore } from "../../src/blobs/local-blob-store.js";
import { spoolUpload } from "../../src/blobs/spool.js";
import { tempDir } from "../helpers.js";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

async function* chunks(parts: Buffer[], failAfter?: number): AsyncGenerator<Buffer> {
  for (const [i, part] of parts.entries()) {
    if (failAfter !== undefined && i === failAfter) throw new Error("the client went away");
    yield part;
  }
}

/** 3 MiB in 64 KiB chunks: spooled in writes of about 1 MiB. */
const big = Buffer.alloc(3 * 1024 * 1024, 7);
const pieces = Array.from({ length: 48 }, (_, i) => big.subarray(i * 65536, (i + 1) * 65536));

describe("spoolUpload: the blob stores' one way in (local and S3)", () => {
  it("keeps a body of at most inlineBelow bytes in memory, hashed", async () => {
    const dir = tempDir();
    const body = Buffer.from("small");
    const got = await spoolUpload([body], { maxBytes: 100, inlineBelow: 5 }, dir);
    expect(got).toEqual({ kind: "inline", bytes: body, sha256: sha(body), size: 5 });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("spools a larger body to a private file named with the prefix, whole and hashed", async () => {
    const dir = tempDir();
    const got = await spoolUpload(chunks(pieces), { maxBytes: big.length, inlineBelow: 1024 }, dir, "prim-s3-");
    expect(got).toMatchObject({ kind: "spooled", sha256: sha(big), size: big.length });
    if (got.kind !== "spooled") throw new Error("not spooled");
    expect(got.path.startsWith(join(dir, "prim-s3-"))).toBe(true);
    expect(statSync(got.path).mode & 0o777).toBe(0o600);
    expect(readFileSync(got.path).equals(big)).toBe(true);
  });

  it("refuses a body over maxBytes with 413 and leaves no temp file; so does a source that fails", async () => {
    const dir = tempDir();
    await expect(spoolUpload(chunks(pieces), { maxBytes: big.length - 1, inlineBelow: 0 }, dir)).rejects.toMatchObject({
      code: "payload_too_large",
    });
    await expect(spoolUpload(chunks(pieces, 20), { maxBytes: big.length, inlineBelow: 0 }, dir)).rejects.toThrow(
      "the client went away",
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it("LocalBlobStore puts a spooled body under its hash and keeps nothing in tmp/", async () => {
    const dir = tempDir();
    const store = new LocalBlobStore(dir);
    const got = await store.ingest(chunks(pieces), { maxBytes: big.length, inlineBelow: 1024 });
    expect(got).toEqual({ kind: "blob", hash: sha(big), sha256: sha(big), size: big.length });
    expect(readFileSync(join(dir, sha(big).slice(0, 2), sha(big))).equals(big)).toBe(true);
    expect(readdirSync(join(dir, "tmp"))).toEqual([]);
    await expect(store.ingest(chunks(pieces, 30), { maxBytes: big.length, inlineBelow: 0 })).rejects.toThrow();
    expect(readdirSync(join(dir, "tmp"))).toEqual([]);
  });
});
