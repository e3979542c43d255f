/**
 * Framing of the engine ↔ SQL host channel (a socket pair): each frame is a 4-byte length, a
 * 4-byte id, a 1-byte status and a UTF-8 JSON payload. Requests carry `{ req }` with status 0;
 * replies carry the value (status 0, or 2: an `exec` that changed the file) or `{ code, message }`
 * (status 1). A reply's JSON text is
 * exactly the result, so the engine can send it on as a response body without serialising it
 * again — the reason this is not Node's IPC channel (which would escape it inside a message).
 */
export const HEADER_BYTES = 9;
/** The id of the frame a host sends once when it starts (requests count from 1). */
export const READY_FRAME_ID = 0;

export interface Frame {
  id: number;
  status: number;
  text: string;
}

export function encodeFrame(id: number, status: number, text: string): Buffer {
  const length = Buffer.byteLength(text, "utf8");
  const frame = Buffer.allocUnsafe(HEADER_BYTES + length);
  frame.writeUInt32LE(length, 0);
  frame.writeUInt32LE(id, 4);
  frame.writeUInt8(status, 8);
  frame.write(text, HEADER_BYTES, "utf8");
  return frame;
}

/**
 * Collects chunks from a stream and hands out whole frames. Chunks are kept as they came and
 * joined once a whole frame is there, so a large frame costs one copy, not one per chunk.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes the frame at the head needs in all (header included), once its header is here. */
  private needed = HEADER_BYTES;

  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered < this.needed) return;
    let buffer = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.buffered);
    let offset = 0;
    this.needed = HEADER_BYTES;
    while (buffer.length - offset >= HEADER_BYTES) {
      const end = offset + HEADER_BYTES + buffer.readUInt32LE(offset);
      if (buffer.length < end) {
        this.needed = end - offset;
        break;
      }
      onFrame({
        id: buffer.readUInt32LE(offset + 4),
        status: buffer.readUInt8(offset + 8),
        text: buffer.toString("utf8", offset + HEADER_BYTES, end),
      });
      offset = end;
    }
    buffer = buffer.subarray(offset);
    // A copy, so the rest does not pin the (possibly large) buffer it was cut from.
    this.chunks = buffer.length === 0 ? [] : [Buffer.from(buffer)];
    this.buffered = buffer.length;
  }
}
