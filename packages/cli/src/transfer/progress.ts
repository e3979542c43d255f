import { open } from "node:fs/promises";
import { MANIFEST_ENTRY, parseTarHeader, TAR_BLOCK, tarPadding } from "@prim/engine";

/** Where each primitive's part (its file and the blobs it brings) ends in an archive. */
export interface ArchiveLayout {
  primitives: number;
  /** End offset of each primitive's entry, in order. */
  ends: number[];
}

/** The layout of an archive file, from its tar headers (a few reads; nothing else is read). */
export async function layoutOfFile(path: string): Promise<ArchiveLayout | null> {
  const file = await open(path, "r");
  try {
    const header = Buffer.alloc(TAR_BLOCK);
    const ends: number[] = [];
    let offset = 0;
    let inPrimitive = false;
    for (;;) {
      const { bytesRead } = await file.read(header, 0, TAR_BLOCK, offset);
      const entry = bytesRead < TAR_BLOCK ? null : parseTarHeader(header);
      if (entry === null) break;
      // A primitive's entry is followed by its blobs: it is done where the next one (or the
      // manifest) begins.
      const starts = entry.name.startsWith("primitives/");
      if ((starts || entry.name === MANIFEST_ENTRY) && inPrimitive) ends.push(offset);
      inPrimitive = starts || (inPrimitive && entry.name !== MANIFEST_ENTRY);
      offset += TAR_BLOCK + entry.size + tarPadding(entry.size).length;
    }
    return { primitives: ends.length, ends };
  } catch {
    return null; // not an archive this can read: no primitive counts in the progress line
  } finally {
    await file.close();
  }
}

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
export const mbPerSecond = (bytes: number, ms: number) => (ms <= 0 ? 0 : bytes / 1e6 / (ms / 1000));

/**
 * A progress line on a terminal (stderr), redrawn at most five times a second: bytes done of the
 * whole, primitives done, rate and time left. Nothing when stderr is not a terminal.
 */
export class Progress {
  private done = 0;
  private total = 0;
  private layout: ArchiveLayout | null = null;
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly enabled = stream.isTTY === true,
  ) {}

  /** Starts a phase over `total` bytes, `from` of them already done (a resumed transfer). */
  phase(total: number, from = 0, layout: ArchiveLayout | null = null): void {
    this.total = total;
    this.done = from;
    this.layout = layout;
  }

  add(bytes: number): void {
    this.done += bytes;
    const now = Date.now();
    if (this.enabled && now - this.lastDraw >= 200) {
      this.lastDraw = now;
      this.draw(now);
    }
  }

  private draw(now: number): void {
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const eta = rate > 0 && this.total > this.done ? `ETA ${Math.ceil((this.total - this.done) / rate)}s` : "";
    const primitives =
      this.layout === null
        ? ""
        : `${this.layout.ends.filter((end) => end <= this.done).length}/${this.layout.primitives} primitives  `;
    const line = `${this.label}  ${mib(this.done)} / ${mib(this.total)}  ${primitives}${(rate / 1e6).toFixed(1)} MB/s  ${eta}`;
    this.stream.write(`\r${line.padEnd(100)}`);
    this.drawn = true;
  }

  /** Ends the line (the summary follows on its own lines). */
  finish(): void {
    if (this.drawn) this.stream.write("\n");
    this.drawn = false;
  }
}
