// The probe's group-archive tools (probe-archives.test.ts, probe-secret-export.test.ts): export
// and import over HTTP, an archive's entries read and rewritten as an attacker would (tar-stream,
// the manifest's sizes and sha256s made to match), and the offline decryption an attacker tries
// with an X25519 key of its own: whatever vault value it recovers was handed to it.
import { createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
// The engine's own primitives: the attacker's decryption follows the archive format exactly, and
// a file is opened as the engine opens one.
import { sealingContext as context, openSqlite, unseal, unwrapArchiveKey, type WrappedArchiveKey } from "@prim/engine";
import { extract, pack } from "tar-stream";
import { sha256 } from "./probe-cloud.js";

export const MANIFEST = "prim-archive.json";

export interface Entry {
  name: string;
  bytes: Buffer;
}

export interface Exported {
  status: number;
  bytes: Buffer;
  /** The error body when the export was refused. */
  error: { code: string; message: string } | null;
}

/** `GET /v1/groups/{group}/export[?recipient=]`: the archive's bytes, or the refusal. */
export async function exportGroup(base: string, key: string, group: string, recipient?: string): Promise<Exported> {
  const query = recipient === undefined ? "" : `?recipient=${recipient}`;
  const res = await fetch(`${base}/v1/groups/${group}/export${query}`, { headers: { authorization: `Bearer ${key}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) return { status: res.status, bytes, error: JSON.parse(bytes.toString()).error };
  if (res.headers.get("x-prim-archive-sha256") !== sha256(bytes)) throw new Error("export: the sha256 differs");
  return { status: 200, bytes, error: null };
}

/** `POST /v1/groups/{group}/import?sha256=…` with the whole archive. */
export async function importGroup(
  base: string,
  key: string,
  group: string,
  bytes: Buffer,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/v1/groups/${group}/import?sha256=${sha256(bytes)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-tar" },
    body: bytes,
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

/** The entries of a tar file, in order. */
export async function readArchive(bytes: Buffer): Promise<Entry[]> {
  const entries: Entry[] = [];
  const tar = extract();
  tar.on("entry", (header, stream, next) => {
    const parts: Buffer[] = [];
    stream.on("data", (chunk) => parts.push(chunk as Buffer));
    stream.on("end", () => {
      entries.push({ name: header.name, bytes: Buffer.concat(parts) });
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    tar.on("finish", resolve);
    tar.on("error", reject);
  });
  Readable.from([bytes]).pipe(tar);
  await done;
  return entries;
}

/** A ustar file of `entries`, in order. */
export async function writeArchive(entries: Entry[]): Promise<Buffer> {
  const tar = pack();
  const parts: Buffer[] = [];
  tar.on("data", (chunk) => parts.push(chunk as Buffer));
  const done = new Promise<void>((resolve) => tar.on("end", resolve));
  for (const e of entries) tar.entry({ name: e.name, size: e.bytes.length, mtime: new Date(0) }, e.bytes);
  tar.finalize();
  await done;
  return Buffer.concat(parts);
}

export function manifestOf(entries: Entry[]): Record<string, any> {
  const entry = entries.find((e) => e.name === MANIFEST);
  if (entry === undefined) throw new Error("the archive has no manifest");
  return JSON.parse(entry.bytes.toString());
}

/** The archive with `name`'s bytes replaced and the manifest's size and sha256 made to match. */
export async function withEntry(archive: Buffer, name: string, bytes: Buffer): Promise<Buffer> {
  const entries = await readArchive(archive);
  const manifest = manifestOf(entries);
  const listed = manifest.primitives.find((p: { entry: string }) => p.entry === name);
  if (listed === undefined) throw new Error(`the manifest lists no '${name}'`);
  Object.assign(listed, { size: bytes.length, sha256: sha256(bytes) });
  return writeArchive(
    entries.map((e) => {
      if (e.name === name) return { name, bytes };
      if (e.name === MANIFEST) return { name: MANIFEST, bytes: Buffer.from(JSON.stringify(manifest)) };
      return e;
    }),
  );
}

/** The entry name of the archive's first primitive of `type`. */
export async function entryOf(archive: Buffer, type: string): Promise<string> {
  const manifest = manifestOf(await readArchive(archive));
  const found = manifest.primitives.find((p: { type: string }) => p.type === type);
  if (found === undefined) throw new Error(`the archive holds no ${type}`);
  return found.entry;
}

/** Runs `fn` on a SQLite file holding `bytes` (a temp copy); answers `fn`'s answer and the file's bytes after. */
export async function onSqliteFile<T>(
  bytes: Buffer,
  fn: (db: ReturnType<typeof openSqlite>) => T,
): Promise<{ result: T; bytes: Buffer }> {
  const dir = mkdtempSync(join(tmpdir(), "prim-probe-sqlite-"));
  try {
    const path = join(dir, "file.sqlite");
    writeFileSync(path, bytes);
    const db = openSqlite(path);
    let result: T;
    try {
      result = fn(db);
      db.pragma("journal_mode = DELETE"); // the WAL folded in: the file alone is the database
    } finally {
      db.close();
    }
    return { result, bytes: readFileSync(path) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An attacker's own X25519 key pair; `publicKey` is what `?recipient=` takes. */
export function attackerKey(): { publicKey: string; privateKey: KeyObject } {
  const pair = generateKeyPairSync("x25519");
  const jwk = createPublicKey(pair.privateKey).export({ format: "jwk" }) as { x: string };
  return { publicKey: jwk.x, privateKey: pair.privateKey };
}

/**
 * Every vault value of `archive` that `key` can decrypt offline, by secret name: the archive key
 * unwrapped with the private key, then each row of each vault file unsealed with it (the
 * archive format: engine README, "Group archives"). Nothing decrypts when the archive is sealed
 * for another key or carries no values. Also answers the secret names the vault files list.
 */
export async function recoverSecrets(
  archive: Buffer,
  key: { publicKey: string; privateKey: KeyObject },
): Promise<{ values: Map<string, string>; names: string[] }> {
  const entries = await readArchive(archive);
  const manifest = manifestOf(entries);
  const wrapped = manifest.vault as WrappedArchiveKey | null;
  let archiveKey: Buffer | null = null;
  if (wrapped !== null && wrapped.recipient === key.publicKey) archiveKey = unwrapArchiveKey(wrapped, key);
  const values = new Map<string, string>();
  const names: string[] = [];
  for (const p of manifest.primitives.filter((x: { type: string }) => x.type === "vault")) {
    const file = entries.find((e) => e.name === p.entry) as Entry;
    const { result: rows } = await onSqliteFile(
      file.bytes,
      (db) => db.prepare("SELECT * FROM secrets").all() as Record<string, any>[],
    );
    for (const row of rows) {
      names.push(row.name);
      if (archiveKey === null || !Buffer.isBuffer(row.ciphertext) || !Buffer.isBuffer(row.iv)) continue;
      const plain = unseal(
        archiveKey,
        { iv: row.iv, tag: row.tag, ciphertext: row.ciphertext },
        context("prim.archive.secret.v1", row.name, row.version),
      );
      if (plain !== null) values.set(row.name, plain.toString());
    }
  }
  return { values, names: names.sort() };
}
