import { parseArgs } from "node:util";
import { z } from "zod";
import {
  credentialsPath,
  readCredentials,
  removeCredential,
  resolveApi,
  resolveApiUrl,
  saveCredential,
} from "./credentials.js";
import { API_KEY_FLAG_WARNING, forgetEnvSecrets, readEnv } from "./env.js";

/**
 * `prim login`, `prim logout`, `prim whoami`: an API key checked against `GET /v1/whoami` and
 * kept in the credentials file (src/credentials.ts). The key is never printed, logged or put in
 * an error message: every message these commands throw passes through `redactKeys`.
 */

const whoAmISchema = z.object({
  workspace: z.string(),
  /** The workspace's name (cloud keys); null locally, absent from a server older than this prim. */
  workspace_name: z.string().nullable().default(null),
  actor: z.string(),
  kind: z.enum(["workspace", "scoped", "local"]),
  group: z.object({ id: z.string(), name: z.string() }).nullable(),
  tools: z.array(z.string()).nullable(),
  /** Absent from a server older than this prim: not read-only. */
  read_only: z.boolean().default(false),
});

type WhoAmI = z.infer<typeof whoAmISchema>;

type Answer = { ok: true; who: WhoAmI } | { ok: false; status: number; code: string; message: string };

/** An API key: `pk_` and printable ASCII (anything else could not even go in a header). */
const KEY_PATTERN = /^pk_[\x21-\x7e]+$/;

const TIMEOUT_MS = 15_000;

/** Anything shaped like a key becomes `[key]`, whole (not even a prefix is kept). */
export function redactKeys(text: string): string {
  return text.replace(/pk_[^\s'"`,;)]+/g, "[key]");
}

/** Runs a command; whatever it throws comes out as one line naming the command, without keys. */
async function guarded(command: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    throw new Error(`prim ${command}: ${redactKeys(err instanceof Error ? err.message : String(err))}`);
  }
}

function networkError(err: unknown): string {
  if (err instanceof Error && err.name === "TimeoutError") return `no answer within ${TIMEOUT_MS / 1000} s`;
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  if (cause?.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/** `GET <api>/v1/whoami` with the key as a Bearer token. Throws only for the network or a nonsense answer. */
async function askWhoAmI(api: string, key: string): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(`${api}/v1/whoami`, {
      headers: { authorization: `Bearer ${key}`, accept: "application/json" },
      // A redirect would carry the key elsewhere; say where it points instead.
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new Error(`could not reach ${api}: ${networkError(err)}`);
  }
  if (res.status >= 300 && res.status < 400) {
    const location = res.headers.get("location");
    throw new Error(`${api} answered with a redirect${location ? ` to ${location}` : ""}; pass that URL as --api`);
  }
  const body: unknown = await res.json().catch(() => undefined);
  if (res.ok) {
    const who = whoAmISchema.safeParse(body);
    if (!who.success) throw new Error(`${api}/v1/whoami gave an answer this prim does not understand`);
    return { ok: true, who: who.data };
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  return {
    ok: false,
    status: res.status,
    code: typeof error?.code === "string" ? error.code : `http_${res.status}`,
    message: typeof error?.message === "string" ? error.message : res.statusText,
  };
}

function failure(api: string, answer: Extract<Answer, { ok: false }>): Error {
  return new Error(`${api} answered ${answer.status} ${answer.code}: ${answer.message}`);
}

/** `workspace <name> (<id>)` where the server names it, else `workspace <id>` (the local engine: `local`). */
export function describeWorkspace(who: Pick<WhoAmI, "workspace" | "workspace_name">): string {
  return who.workspace_name === null
    ? `workspace ${who.workspace}`
    : `workspace ${who.workspace_name} (${who.workspace})`;
}

/** `every group and tool`, or the group and tools a scoped key is limited to; `, read-only` after. */
export function describeScope(who: Pick<WhoAmI, "kind" | "group" | "tools"> & { read_only?: boolean }): string {
  if (who.kind === "local") return "local access without a key";
  const readOnly = who.read_only === true ? ", read-only" : "";
  if (who.kind === "workspace") return `every group and tool${readOnly}`;
  const group = who.group === null ? "every group" : `group ${who.group.name}`;
  return `${group}, tools ${who.tools === null ? "every tool" : who.tools.join(",")}${readOnly}`;
}

/**
 * Reads a key from the terminal without echo (raw mode): Enter ends it, Backspace deletes,
 * Ctrl-U clears, Ctrl-C aborts with exit 130. The prompt goes to stderr.
 */
function promptKey(api: string): Promise<string> {
  const stdin = process.stdin;
  // Echo goes off before the prompt shows, so nothing typed after it is ever echoed.
  stdin.setRawMode(true);
  process.stderr.write(`API key for ${api}: `);
  return new Promise((resolve) => {
    let key = "";
    const finish = () => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
    };
    const onData = (chunk: string) => {
      // Arrow keys and other escape sequences arrive as one chunk; they are not part of a key.
      if (chunk.startsWith("\u001b")) return;
      for (const ch of chunk) {
        if (ch === "\u0003") {
          finish();
          process.exit(130);
        }
        if (ch === "\r" || ch === "\n" || ch === "\u0004") {
          finish();
          resolve(key);
          return;
        }
        if (ch === "\u007f" || ch === "\b") key = key.slice(0, -1);
        else if (ch === "\u0015") key = "";
        else if (ch >= " ") key += ch;
      }
    };
    stdin.setEncoding("utf8");
    stdin.on("data", onData);
    stdin.resume();
  });
}

/** The key: `--key`, else `PRIM_API_KEY`, else typed at a prompt when stdin is a terminal. */
async function obtainKey(api: string, flag: string | undefined, fromEnv: string | undefined): Promise<string> {
  if (flag !== undefined && flag !== "") return flag;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  if (process.stdin.isTTY) return promptKey(api);
  throw new Error("no API key: pass --key, set PRIM_API_KEY, or run prim login in a terminal to be asked for it");
}

/** `prim login [--api URL] [--key K] [--json]`. */
export async function login(args: string[]): Promise<void> {
  return guarded("login", async () => {
    const { values } = parseArgs({
      args,
      options: { api: { type: "string" }, key: { type: "string" }, json: { type: "boolean" } },
      strict: true,
    });
    const env = readEnv();
    forgetEnvSecrets();
    if (values.key !== undefined) console.error(API_KEY_FLAG_WARNING);
    const api = resolveApiUrl(env, values.api);
    const key = (await obtainKey(api, values.key, env.PRIM_API_KEY)).trim();
    if (!KEY_PATTERN.test(key)) throw new Error("that is not an API key (one starts with pk_); nothing was sent");
    const answer = await askWhoAmI(api, key);
    if (!answer.ok) {
      if (answer.status === 401) throw new Error(`the key was refused by ${api} (${answer.code}); nothing saved`);
      throw failure(api, answer);
    }
    const who = answer.who;
    if (who.kind === "local") {
      throw new Error(`${api} is a local engine without a root token: it takes no key (nothing saved)`);
    }
    const file = saveCredential(env, api, {
      key,
      workspace: who.workspace,
      kind: who.kind,
      group: who.group?.name ?? null,
      tools: who.tools,
    });
    if (values.json) console.log(JSON.stringify({ api, ...who, file }));
    else console.log(`logged in to ${api}: ${describeWorkspace(who)}, ${describeScope(who)}`);
  });
}

/** `prim logout [--api URL] [--all] [--json]`: exit 0 whether or not a key was stored. */
export async function logout(args: string[]): Promise<void> {
  return guarded("logout", async () => {
    const { values } = parseArgs({
      args,
      options: { api: { type: "string" }, all: { type: "boolean" }, json: { type: "boolean" } },
      strict: true,
    });
    if (values.all && values.api !== undefined) throw new Error("--all and --api do not go together");
    const env = readEnv();
    forgetEnvSecrets();
    const file = credentialsPath(env);
    const stored = readCredentials(env);
    let removed: string[];
    let api: string | undefined;
    if (values.all) {
      removed = Object.keys(stored.apis);
      removeCredential(env);
    } else {
      api = resolveApiUrl(env, values.api, () => stored);
      removed = removeCredential(env, api) ? [api] : [];
    }
    if (values.json) console.log(JSON.stringify({ removed, file }));
    else if (removed.length > 0) console.log(`logged out: removed the key for ${removed.join(", ")} from ${file}`);
    else console.log(`logged out: no key was stored${api === undefined ? "" : ` for ${api}`} (${file})`);
  });
}

/** `prim whoami [--api URL] [--json]`: who the key that other commands would use is. */
export async function whoami(args: string[]): Promise<void> {
  return guarded("whoami", async () => {
    const { values } = parseArgs({
      args,
      options: { api: { type: "string" }, json: { type: "boolean" } },
      strict: true,
    });
    const env = readEnv();
    forgetEnvSecrets();
    const { api, key, source } = resolveApi(env, { api: values.api });
    const answer = await askWhoAmI(api, key);
    if (!answer.ok) {
      if (answer.status === 401) {
        throw new Error(
          source === "file"
            ? `the stored key is no longer accepted by ${api}; run prim login again`
            : `the key from ${source} was refused by ${api} (${answer.code})`,
        );
      }
      throw failure(api, answer);
    }
    const who = answer.who;
    if (values.json) console.log(JSON.stringify({ api, ...who, source }));
    else console.log(`${api}: ${describeWorkspace(who)}, ${describeScope(who)} (key from ${source})`);
  });
}
