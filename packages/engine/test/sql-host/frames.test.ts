import { describe, expect, it } from "vitest";
import { encodeFrame, type Frame, FrameReader } from "../../src/sql-host/frames.js";

function readAll(stream: Buffer, chunkSize: number): Frame[] {
  const reader = new FrameReader();
  const frames: Frame[] = [];
  for (let o = 0; o < stream.length; o += chunkSize)
    reader.push(stream.subarray(o, o + chunkSize), (f) => frames.push(f));
  return frames;
}

describe("db host channel frames", () => {
  const frames = [
    encodeFrame(1, 0, '{"a":1}'),
    encodeFrame(2, 1, '{"code":"conflict","message":"é €"}'),
    encodeFrame(3, 0, ""),
    encodeFrame(4, 0, "x".repeat(200_000)),
  ];
  const stream = Buffer.concat(frames);

  it("hands out every frame whole, whatever the chunk boundaries", () => {
    for (const size of [1, 2, 7, 9, 10, 4096, 65536, stream.length]) {
      const got = readAll(stream, size);
      expect(got.map((f) => f.id)).toEqual([1, 2, 3, 4]);
      expect(got[1]).toEqual({ id: 2, status: 1, text: '{"code":"conflict","message":"é €"}' });
      expect(got[2]?.text).toBe("");
      expect(got[3]?.text).toHaveLength(200_000);
    }
  });

  it("keeps a partial frame for the next chunk", () => {
    const reader = new FrameReader();
    const got: Frame[] = [];
    const one = encodeFrame(9, 0, "hello");
    reader.push(one.subarray(0, 11), (f) => got.push(f));
    expect(got).toEqual([]);
    reader.push(Buffer.concat([one.subarray(11), encodeFrame(10, 0, "x").subarray(0, 3)]), (f) => got.push(f));
    expect(got).toEqual([{ id: 9, status: 0, text: "hello" }]);
  });
});
