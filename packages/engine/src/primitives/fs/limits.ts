import { invalid } from "@prim/wire";
import { z } from "zod";

/** Largest file: 1 GiB, streamed. Over it: 413, and nothing is kept. */
export const MAX_FILE_BYTES = 1024 ** 3;
/** Files up to this size live inside the primitive's SQLite file; larger ones are shared blobs. */
export const INLINE_FILE_BYTES = 64 * 1024;
/** Longest canonical path, in UTF-8 bytes (the leading `/` included). */
export const MAX_PATH_BYTES = 1024;
/** Longest name of one path segment, in UTF-8 bytes (POSIX NAME_MAX). */
export const MAX_NAME_BYTES = 255;
/** Text files up to this size are indexed for search; larger or binary files are not. */
export const MAX_INDEXED_BYTES = 1024 * 1024;
/** Most entries one listing returns; past it the listing says `truncated: true`. */
export const MAX_LIST_ENTRIES = 10_000;
/** Glob results: default and maximum `limit`. */
export const GLOB_PAGE = { default: 100, max: 1000 };
/** Modes of files and directories created without `X-Service-Mode`. */
export const DEFAULT_FILE_MODE = 0o644;
export const DEFAULT_DIR_MODE = 0o755;

/** The root directory's canonical path. */
export const ROOT = "/";

// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find them
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/**
 * The canonical form of a path: rooted (`/a/b`), no empty or `.` segments, `..` resolved
 * lexically. Paths name rows in the store's own tree, never host files; still, a `..` that
 * would climb above the root is refused rather than clamped, so a caller learns that its path
 * was not what it meant. `field` names the input in messages.
 */
export function normalizePath(raw: string, field = "path"): string {
  if (CONTROL_RE.test(raw)) throw invalid(`${field}: must not contain NUL or control characters`);
  const out: string[] = [];
  for (const segment of raw.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length === 0) throw invalid(`${field}: '..' must not climb above the root`);
      out.pop();
      continue;
    }
    if (Buffer.byteLength(segment, "utf8") > MAX_NAME_BYTES) {
      throw invalid(`${field}: a name is longer than ${MAX_NAME_BYTES} bytes`);
    }
    out.push(segment);
  }
  const path = `/${out.join("/")}`;
  const bytes = Buffer.byteLength(path, "utf8");
  if (bytes > MAX_PATH_BYTES) throw invalid(`${field}: path is ${bytes} bytes; the limit is ${MAX_PATH_BYTES}`);
  return path;
}

/** The directory holding `path` (`/` for a top-level entry); null for the root. */
export function parentOf(path: string): string | null {
  if (path === ROOT) return null;
  const cut = path.lastIndexOf("/");
  return cut === 0 ? ROOT : path.slice(0, cut);
}

export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Every ancestor of `path`, outermost first, the root excluded. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let p = parentOf(path); p !== null && p !== ROOT; p = parentOf(p)) out.unshift(p);
  return out;
}

/**
 * Bounds of the subtree strictly below `path` for a range scan: rows with `lo < path < hi`.
 * With SQLite's byte-order comparison these are exactly the paths starting with `path/`
 * ('0' is the byte after '/').
 */
export function subtreeBounds(path: string): { lo: string; hi: string } {
  const lo = path === ROOT ? ROOT : `${path}/`;
  return { lo, hi: `${lo.slice(0, -1)}0` };
}

/** True when `inner` is `outer` or lies below it. */
export function isWithin(inner: string, outer: string): boolean {
  return inner === outer || outer === ROOT || inner.startsWith(`${outer}/`);
}

/** A path as input: normalised by the schema, so handlers only see canonical paths. */
export const pathSchema = z.string().max(MAX_PATH_BYTES * 4, "is far too long");

/** `X-Service-Mode`: three octal digits, optionally with a leading 0 (`644`, `0755`). */
export const modeSchema = z
  .string()
  .regex(/^0?[0-7]{3}$/, "must be an octal permission string such as 644 or 0755")
  .transform((mode) => Number.parseInt(mode, 8));

/** A stored mode as the three-digit octal string callers sent (`644`). */
export function formatMode(mode: number): string {
  return mode.toString(8).padStart(3, "0");
}
