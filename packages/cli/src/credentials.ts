import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import type { Env } from "./env.js";

/**
 * The per-user credentials file of `prim login` (`credentials.json`, 0600 in a 0700 directory):
 * one API key per API URL, the last login being the default. `resolveApi` is what every command
 * that talks to an API uses to find its URL and key.
 */

/** The variables these functions read: `readEnv()`'s result, or any environment object. */
export type CredentialsEnv = Partial<
  Pick<Env, "PRIM_API_URL" | "PRIM_API_KEY" | "PRIM_CONFIG_DIR" | "XDG_CONFIG_HOME" | "HOME">
>;

/** The API used when neither a flag, the environment nor the file names one: the cloud's local api. */
export const DEFAULT_API_URL = "http://localhost:8787";

const entrySchema = z.object({
  key: z.string().startsWith("pk_"),
  workspace: z.string(),
  kind: z.enum(["workspace", "scoped"]),
  group: z.string().nullable(),
  tools: z.array(z.string()).nullable(),
  saved_at: z.number(),
});

const fileSchema = z.object({
  version: z.literal(1),
  default: z.string().optional(),
  apis: z.record(z.string(), entrySchema),
});

export type CredentialEntry = z.infer<typeof entrySchema>;
export type CredentialsFile = z.infer<typeof fileSchema>;

/** Where a key came from: `--key`, the environment, or the credentials file. */
export type KeySource = "flag" | "PRIM_API_KEY" | "file";

const set = (value: string | undefined): string | undefined =>
  value === undefined || value === "" ? undefined : value;

/** `$PRIM_CONFIG_DIR/credentials.json`, else `$XDG_CONFIG_HOME/prim/…`, else `~/.config/prim/…`. */
export function credentialsPath(env: CredentialsEnv): string {
  const configDir = set(env.PRIM_CONFIG_DIR);
  if (configDir !== undefined) return join(configDir, "credentials.json");
  // The XDG spec says a relative XDG_CONFIG_HOME is to be ignored.
  const xdg = set(env.XDG_CONFIG_HOME);
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(set(env.HOME) ?? homedir(), ".config");
  return join(base, "prim", "credentials.json");
}

/** `https://api.example.com/` → `https://api.example.com`; anything but an http(s) URL is refused. */
export function normaliseApiUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new Error(`the API URL must be an http(s) URL, got '${input}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`the API URL must be an http(s) URL, got '${input}'`);
  }
  // Credentials in a URL would be stored in the clear as the file's keys, and printed.
  if (url.username !== "" || url.password !== "") throw new Error("the API URL must not contain a user or password");
  if (url.search !== "" || url.hash !== "") throw new Error("the API URL must not have a query or fragment");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The file's content; an empty one when there is no file. Throws, naming the file, if it is not valid. */
export function readCredentials(env: CredentialsEnv): CredentialsFile {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, apis: {} };
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON.parse's message: it quotes the text, which holds keys.
    throw new Error(`the credentials file ${path} is not valid JSON; remove it and run prim login again`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    // Paths only, never values.
    const where = parsed.error.issues.map((i) => i.path.join(".") || "(top level)").join(", ");
    throw new Error(`the credentials file ${path} is not valid (${where}); remove it and run prim login again`);
  }
  return parsed.data;
}

/** Narrows a directory to 0700 or a file to 0600 when group or others have any access. */
function tighten(path: string, mode: number): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

/**
 * Replaces the file atomically: a temp file created 0600 in the same directory, then a rename, so
 * no reader ever sees half a file and the key is never in a file anyone else can read.
 */
function writeCredentials(path: string, content: CredentialsFile): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  tighten(dir, 0o700);
  tighten(path, 0o600);
  const temp = join(dir, `.credentials.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    try {
      writeFileSync(fd, `${JSON.stringify(content, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    try {
      unlinkSync(temp);
    } catch {}
    throw err;
  }
}

/** Stores the key for `api` (replacing any other for it) and makes `api` the default. Returns the file's path. */
export function saveCredential(
  env: CredentialsEnv,
  api: string,
  entry: Omit<CredentialEntry, "saved_at"> & { saved_at?: number },
): string {
  const url = normaliseApiUrl(api);
  if (!entry.key.startsWith("pk_")) throw new Error("an API key starts with pk_");
  const path = credentialsPath(env);
  const current = readCredentials(env);
  const saved: CredentialEntry = { ...entry, saved_at: entry.saved_at ?? Date.now() };
  writeCredentials(path, { version: 1, default: url, apis: { ...current.apis, [url]: saved } });
  return path;
}

/**
 * Removes the key stored for `api`, or every key when `api` is omitted; returns whether anything
 * was removed. When the default goes, the most recently saved remaining API becomes the default;
 * when nothing remains, the file goes.
 */
export function removeCredential(env: CredentialsEnv, api?: string): boolean {
  const path = credentialsPath(env);
  const current = readCredentials(env);
  const url = api === undefined ? undefined : normaliseApiUrl(api);
  const remaining = Object.entries(current.apis).filter(([name]) => url !== undefined && name !== url);
  if (remaining.length === Object.keys(current.apis).length) return false;
  if (remaining.length === 0) {
    unlinkSync(path);
    return true;
  }
  const apis = Object.fromEntries(remaining);
  const newest = remaining.reduce((a, b) => (b[1].saved_at > a[1].saved_at ? b : a))[0];
  const fallback = current.default !== undefined && current.default in apis ? current.default : newest;
  writeCredentials(path, { version: 1, default: fallback, apis });
  return true;
}

/** The API a command talks to: `--api`, else `PRIM_API_URL`, else the file's default, else `DEFAULT_API_URL`. */
export function resolveApiUrl(env: CredentialsEnv, flag?: string, file?: () => CredentialsFile): string {
  const named = set(flag) ?? set(env.PRIM_API_URL);
  if (named !== undefined) return normaliseApiUrl(named);
  return normaliseApiUrl((file ?? (() => readCredentials(env)))().default ?? DEFAULT_API_URL);
}

/**
 * The API and the key for it: the key from `--key`, else `PRIM_API_KEY`, else the file's entry
 * for that API (the API as `resolveApiUrl` finds it). The file is read only when needed. Throws
 * when there is no key.
 */
export function resolveApi(
  env: CredentialsEnv,
  flags: { api?: string; key?: string },
): { api: string; key: string; source: KeySource } {
  let file: CredentialsFile | undefined;
  const readFile = () => {
    file ??= readCredentials(env);
    return file;
  };
  const api = resolveApiUrl(env, flags.api, readFile);
  const flagKey = set(flags.key);
  if (flagKey !== undefined) return { api, key: flagKey, source: "flag" };
  const envKey = set(env.PRIM_API_KEY);
  if (envKey !== undefined) return { api, key: envKey, source: "PRIM_API_KEY" };
  const stored = readFile().apis[api];
  if (stored !== undefined) return { api, key: stored.key, source: "file" };
  throw new Error(`not logged in to ${api}: run \`prim login --api ${api}\` or set PRIM_API_KEY`);
}
