import type { ChildProcess } from "node:child_process";
import { createHash, randomFillSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { primCommand, startPrim } from "@prim/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PrimClient } from "../src/index.js";
import { startSdkServer } from "./server.js";

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const MiB = 1024 * 1024;
const TOTAL = 100 * MiB;
const CHUNK = 256 * 1024;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Memory still held after a full collection: garbage (fetch copies each chunk) is not holding. */
function liveBytes(): number {
  gc();
  const { heapUsed, external } = process.memoryUsage(); // external includes array buffers
  return heapUsed + external;
}

/** The most live memory seen while `work` runs (sampled every 50 ms), above its start. */
async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const start = liveBytes();
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, liveBytes());
  }, 50);
  try {
    const result = await work();
    return { result, growth: peak - start };
  } finally {
    clearInterval(timer);
  }
}

/**
 * 100 MiB of random bytes, hashed as they are made, from a ring of 16 buffers refilled in turn:
 * the source itself makes no garbage, and a transport that held more than the ring's worth of
 * chunks unsent would send overwritten bytes (the digests would differ).
 */
function source(hash: ReturnType<typeof createHash>): AsyncIterable<Uint8Array> {
  const ring = Array.from({ length: 16 }, () => Buffer.alloc(CHUNK));
  return {
    async *[Symbol.asyncIterator]() {
      for (let i = 0; i * CHUNK < TOTAL; i++) {
        const chunk = randomFillSync(ring[i % ring.length] as Buffer);
        hash.update(chunk);
        yield chunk;
      }
    },
  };
}

describe("streaming", () => {
  it("puts and gets a 100 MiB object without holding it in memory, either way", async () => {
    // The engine runs as `prim dev` in its own process, so this process's memory is the client's.
    const data = mkdtempSync(join(tmpdir(), "prim-sdk-stream-"));
    dirs.push(data);
    const { url } = await startPrim(primCommand(), ["dev", "--port", "0", "--data", data], children);
    const client = new PrimClient({ baseUrl: url });
    await client.groups.create("app");
    const { id } = await client.primitives.create({ name: "big", type: "storage", group: "app" });
    const storage = client.storage(id);
    const sent = createHash("sha256");
    const up = await peakGrowth(() => storage.put("big.bin", source(sent)));
    expect(up.result.size).toBe(TOTAL);
    const sentDigest = sent.digest("hex");
    expect(up.result.etag).toContain(sentDigest);

    const down = await peakGrowth(async () => {
      const res = await storage.get("big.bin");
      expect(res.headers.get("content-length")).toBe(String(TOTAL));
      const got = createHash("sha256");
      let bytes = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        got.update(chunk);
        bytes += chunk.byteLength;
      }
      return { bytes, digest: got.digest("hex") };
    });
    expect(down.result).toEqual({ bytes: TOTAL, digest: sentDigest });
    // Holding the object anywhere in the client would add ≥ 100 MiB.
    console.log(
      `live memory growth: upload ${(up.growth / MiB).toFixed(1)} MiB, download ${(down.growth / MiB).toFixed(1)} MiB`,
    );
    expect(up.growth).toBeLessThan(64 * MiB);
    expect(down.growth).toBeLessThan(64 * MiB);
  }, 120_000);

  it("streams files both ways through fs too", async () => {
    const { client, primitive } = await startSdkServer();
    const fs = client.fs(await primitive("fs"));
    const sent = createHash("sha256");
    const entry = await fs.write("/data/big.bin", source(sent));
    expect(entry.size).toBe(TOTAL);
    const res = await fs.read("/data/big.bin");
    const got = createHash("sha256");
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) got.update(chunk);
    expect(got.digest("hex")).toBe(sent.digest("hex"));
  }, 120_000);
});
