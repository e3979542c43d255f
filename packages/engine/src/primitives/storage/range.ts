import { type ByteRange, ServiceError } from "@prim/wire";

/**
 * Reads a `Range` header for an object of `size` bytes. A single `bytes=a-b`, `bytes=a-` or
 * `bytes=-n` range is honoured; a malformed or multi-range header is ignored (whole object,
 * 200), as the spec says. A range that starts past the end is 416 with `bytes *\/size`.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null {
  if (header === undefined) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null) return null;
  const [, first, last] = match as unknown as [string, string, string];
  if (first === "" && last === "") return null;
  let start: number;
  let end: number;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0) throw unsatisfiable(size);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(first);
    end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
    if (last !== "" && Number(last) < start) return null; // inverted: malformed
  }
  if (start >= size) throw unsatisfiable(size);
  return { start, end };
}

function unsatisfiable(size: number): ServiceError {
  return new ServiceError("range_not_satisfiable", `range starts past the end of the object (${size} bytes)`, {
    headers: { "Content-Range": `bytes */${size}` },
  });
}
