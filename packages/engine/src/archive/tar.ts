/**
 * The few pieces of POSIX ustar a group archive needs (regular files only): a header for an
 * entry, the padding after it, the end-of-archive marker, and a streaming reader. Any `tar`
 * lists and extracts an archive (`tar tvf group.prim.tar`).
 */

export const BLOCK = 512;
/** ustar's size field holds 11 octal digits. */
export const MAX_ENTRY_BYTES = 8 ** 11 - 1;

function writeString(buf: Buffer, text: string, offset: number, length: number): void {
  buf.write(text, offset, Math.min(Buffer.byteLength(text), length), "utf8");
}

function writeOctal(buf: Buffer, value: number, offset: number, length: number): void {
  writeString(buf, `${value.toString(8).padStart(length - 1, "0")}\0`, offset, length);
}

/** The 512-byte header of a regular file `name` (ASCII, at most 100 bytes) of `size` bytes. */
export function tarHeader(name: string, size: number, mtimeMs: number): Buffer {
  if (Buffer.byteLength(name) > 100 || !/^[\x21-\x7e]+$/.test(name)) throw new Error(`tar: bad entry name ${name}`);
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_ENTRY_BYTES) {
    throw new Error(`tar: entry ${name} is ${size} bytes; an archive entry holds at most ${MAX_ENTRY_BYTES}`);
  }
  const header = Buffer.alloc(BLOCK, 0);
  writeString(header, name, 0, 100);
  writeOctal(header, 0o600, 100, 8);
  writeOctal(header, 0, 108, 8);
  writeOctal(header, 0, 116, 8);
  writeOctal(header, size, 124, 12);
  writeOctal(header, Math.floor(mtimeMs / 1000), 136, 12);
  header.fill(0x20, 148, 156); // checksum field counts as spaces while summing
  header.write("0", 156, "ascii");
  header.write("ustar\0", 257, "ascii");
  header.write("00", 263, "ascii");
  writeString(header, "prim", 265, 32);
  writeString(header, "prim", 297, 32);
  let sum = 0;
  for (const byte of header) sum += byte;
  writeString(header, `${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
  return header;
}

/** Zero bytes that bring an entry of `size` bytes to a whole block. */
export const padding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK, 0);

/** Two zero blocks: the end of the archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK, 0);

export class TarFormatError extends Error {}

/** A parsed header; null for a zero block (the end marker). */
export function parseHeader(block: Buffer): { name: string; size: number } | null {
  if (block.every((b) => b === 0)) return null;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] as number);
  const field = (offset: number, length: number) =>
    block
      .subarray(offset, offset + length)
      .toString("utf8")
      .replace(/\0.*$/s, "")
      .trim();
  const stored = Number.parseInt(field(148, 8), 8);
  if (stored !== sum) throw new TarFormatError("a tar header's checksum does not match");
  if (block.subarray(257, 262).toString("ascii") !== "ustar") throw new TarFormatError("not a ustar archive");
  const type = String.fromCharCode(block[156] as number);
  if (type !== "0" && type !== "\0") throw new TarFormatError(`entry type '${type}' is not a regular file`);
  const size = Number.parseInt(field(124, 12), 8);
  if (!Number.isSafeInteger(size) || size < 0) throw new TarFormatError("a tar header has no valid size");
  const prefix = field(345, 155);
  const name = field(0, 100);
  return { name: prefix === "" ? name : `${prefix}/${name}`, size };
}

/** What the reader hands a visitor: one entry, its bytes arriving in order. */
export interface TarEntryVisitor {
  /** Called at each header; returns the sink for the entry's bytes. */
  entry(name: string, size: number): { write(chunk: Buffer): void | Promise<void>; end(): void | Promise<void> };
}

/**
 * Reads a tar stream chunk by chunk (nothing buffered beyond a header), handing each entry's
 * bytes to the visitor's sink. Ends at the end marker; a stream that ends before it is a
 * truncated archive.
 */
export async function readTar(source: AsyncIterable<Buffer>, visitor: TarEntryVisitor): Promise<void> {
  let header = Buffer.alloc(0);
  let sink: ReturnType<TarEntryVisitor["entry"]> | null = null;
  let remaining = 0; // bytes of the current entry still to come
  let skip = 0; // padding after it
  let ended = false;
  for await (const raw of source) {
    let chunk = raw;
    while (chunk.length > 0 && !ended) {
      if (sink !== null) {
        const take = Math.min(remaining, chunk.length);
        if (take > 0) await sink.write(chunk.subarray(0, take));
        chunk = chunk.subarray(take);
        remaining -= take;
        if (remaining === 0) {
          await sink.end();
          sink = null;
        }
        continue;
      }
      if (skip > 0) {
        const take = Math.min(skip, chunk.length);
        chunk = chunk.subarray(take);
        skip -= take;
        continue;
      }
      const need = BLOCK - header.length;
      header = Buffer.concat([header, chunk.subarray(0, need)]);
      chunk = chunk.subarray(need);
      if (header.length < BLOCK) continue;
      const parsed = parseHeader(header);
      header = Buffer.alloc(0);
      if (parsed === null) {
        ended = true;
        break;
      }
      sink = visitor.entry(parsed.name, parsed.size);
      remaining = parsed.size;
      skip = padding(parsed.size).length;
      if (remaining === 0) {
        await sink.end();
        sink = null;
      }
    }
  }
  if (!ended) throw new TarFormatError("the archive ends before its end marker (truncated)");
}
