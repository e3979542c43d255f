import { createHash } from "node:crypto";
import { createS3Client, S3BlobStore } from "@prim/cells";
import { startS3, TEST_BUCKET } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let s3: Awaited<ReturnType<typeof startS3>>;
let a: S3BlobStore;
let b: S3BlobStore;
beforeAll(async () => {
  s3 = await startS3();
  const client = createS3Client({ endpoint: s3.endpoint, region: "us-east-1" });
  a = new S3BlobStore(client, TEST_BUCKET, "ws_a/");
  b = new S3BlobStore(client, TEST_BUCKET, "ws_b/");
});
afterAll(() => s3?.stop());

async function* chunks(total: number, size = 64 * 1024): AsyncIterable<Buffer> {
  for (let sent = 0; sent < total; sent += size) yield Buffer.alloc(Math.min(size, total - sent), sent % 251);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

const opts = { maxBytes: 8 * 1024 * 1024, inlineBelow: 16 * 1024 };

describe("blobs in S3 (s3rver)", () => {
  it("keeps small bodies inline and stores larger ones under their sha256, readable whole or by range", async () => {
    const small = await a.ingest(chunks(1000), opts);
    expect(small).toMatchObject({ kind: "inline", size: 1000 });
    const big = await a.ingest(chunks(3 * 1024 * 1024 + 17), opts);
    expect(big).toMatchObject({ kind: "blob", size: 3 * 1024 * 1024 + 17 });
    if (big.kind !== "blob") throw new Error("expected a blob");
    const bytes = await readAll(a.read(big.hash));
    expect(bytes.length).toBe(big.size);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(big.hash);
    expect(await readAll(a.read(big.hash, { start: 10, end: 19 }))).toEqual(bytes.subarray(10, 20));
  });

  it("lists and deletes one workspace's blobs only; the same bytes are stored once per workspace", async () => {
    const one = await a.ingest(chunks(100_000), opts);
    const again = await a.ingest(chunks(100_000), opts);
    expect(again).toEqual(one);
    await b.ingest(chunks(100_000), opts);
    const listA = [];
    for await (const item of a.list()) listA.push(item);
    const listB = [];
    for await (const item of b.list()) listB.push(item);
    expect(listB.map((x) => x.hash)).toEqual([(one as { hash: string }).hash]);
    expect(listA.length).toBe(2);
    expect(listA.every((x) => x.mtimeMs > 0)).toBe(true);
    await a.delete((one as { hash: string }).hash);
    const after = [];
    for await (const item of a.list()) after.push(item.hash);
    expect(after).not.toContain((one as { hash: string }).hash);
    // b's copy is untouched.
    expect((await readAll(b.read((one as { hash: string }).hash))).length).toBe(100_000);
  });

  it("cuts an upload off at the limit with 413, storing nothing; a missing blob's stream fails", async () => {
    await expect(a.ingest(chunks(9 * 1024 * 1024), opts)).rejects.toMatchObject({ code: "payload_too_large" });
    await expect(readAll(a.read("0".repeat(64)))).rejects.toThrow();
  });
});
