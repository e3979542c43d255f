// Reading a group archive (a ustar file) as a test does: its entries and its manifest.

/** The entries of a ustar file: name, where its bytes start, and their size. */
export function tarEntries(archive: Buffer): { name: string; offset: number; size: number }[] {
  const out = [];
  for (let pos = 0; pos + 512 <= archive.length; ) {
    const header = archive.subarray(pos, pos + 512);
    if (header.every((b) => b === 0)) break;
    const text = (from: number, to: number) =>
      header.subarray(from, to).toString("latin1").replace(/\0.*$/s, "").trim();
    const size = Number.parseInt(text(124, 136), 8);
    out.push({ name: text(0, 100), offset: pos + 512, size });
    pos += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** The archive's manifest (`prim-archive.json`). */
export function manifestOf(archive: Buffer) {
  const entry = tarEntries(archive).find((e) => e.name === "prim-archive.json");
  if (entry === undefined) throw new Error("no manifest");
  return JSON.parse(archive.subarray(entry.offset, entry.offset + entry.size).toString());
}
