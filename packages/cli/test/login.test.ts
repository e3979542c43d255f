import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { primCommand, ROOT, runPrimCommand, startPrim } from "@prim/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialsPath, readCredentials, removeCredential, resolveApi, saveCredential } from "../src/credentials.js";
import { describeScope } from "../src/login-command.js";

// The root token of the `prim dev` below: a valid key for it, shaped like one (`pk_`).
const TOKEN = `pk_test_${randomBytes(12).toString("hex")}`;
const children: ChildProcess[] = [];
const dirs: string[] = [];
let api: string;

const CLEARED = ["PRIM_API_KEY", "PRIM_API_URL", "PRIM_CONFIG_DIR", "XDG_CONFIG_HOME", "PRIM_ROOT_TOKEN"];
const baseEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !CLEARED.includes(k)));

beforeAll(async () => {
  const data = tempDir();
  const dev = await startPrim(primCommand(), ["dev", "--port", "0", "--data", data], children, {
    ...baseEnv(),
    PRIM_ROOT_TOKEN: TOKEN,
  });
  api = dev.url;
});

afterAll(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-cli-login-"));
  dirs.push(dir);
  return dir;
}

/** A config directory that does not exist yet (login creates it) and the environment naming it. */
function config(extra: NodeJS.ProcessEnv = {}) {
  const dir = join(tempDir(), "prim");
  const env = { ...baseEnv(), PRIM_CONFIG_DIR: dir, ...extra };
  return { dir, file: join(dir, "credentials.json"), env };
}

const mode = (path: string) => statSync(path).mode & 0o777;
const stored = (file: string) => JSON.parse(readFileSync(file, "utf8"));

/** Neither the key nor any part of its secret tail is in what a command printed. */
function expectNoKey(output: { stdout: string; stderr: string }, key = TOKEN) {
  const printed = output.stdout + output.stderr;
  expect(printed).not.toContain(key);
  expect(printed).not.toContain(key.slice(8, 16));
}

describe("prim login (happy)", { timeout: 60_000 }, () => {
  it("--key: saves the key 0600 in a new 0700 directory and prints it nowhere", async () => {
    const { dir, file, env } = config();
    const out = await runPrimCommand(["login", "--api", `${api}/`, "--key", TOKEN], env);
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(`logged in to ${api}: workspace local, every group and tool`);
    expect(out.stderr).toContain("--key is visible to other local users");
    expectNoKey(out);
    expect(mode(dir)).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    const content = stored(file);
    expect(content).toMatchObject({ version: 1, default: api });
    expect(content.apis[api]).toMatchObject({ key: TOKEN, workspace: "local", kind: "workspace", group: null });
    expect(content.apis[api].tools).toBeNull();
    expect(typeof content.apis[api].saved_at).toBe("number");
  });

  it("PRIM_API_KEY and PRIM_API_URL with --json: one JSON object, no warning, the key only in the file", async () => {
    const { dir, file, env } = config({ PRIM_API_KEY: TOKEN, PRIM_API_URL: api });
    const out = await runPrimCommand(["login", "--json"], env);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      api,
      workspace: "local",
      workspace_name: null,
      actor: "key:root",
      kind: "workspace",
      group: null,
      tools: null,
      read_only: false,
      file,
    });
    expect(out.stderr).toBe("");
    expectNoKey(out);
    expect(mode(dir)).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    expect(stored(file).apis[api].key).toBe(TOKEN);
  });

  it("whoami after login (text and --json); logout removes the key and whoami then fails", async () => {
    const { file, env } = config();
    expect((await runPrimCommand(["login", "--api", api, "--key", TOKEN], env)).code).toBe(0);

    const text = await runPrimCommand(["whoami"], env);
    expect(text.code).toBe(0);
    expect(text.stdout.trim()).toBe(`${api}: workspace local, every group and tool (key from file)`);
    const json = await runPrimCommand(["whoami", "--json"], env);
    expect(JSON.parse(json.stdout)).toEqual({
      api,
      workspace: "local",
      workspace_name: null,
      actor: "key:root",
      kind: "workspace",
      group: null,
      tools: null,
      read_only: false,
      source: "file",
    });
    expectNoKey(text);
    expectNoKey(json);

    const out = await runPrimCommand(["logout"], env);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`removed the key for ${api}`);
    expect(existsSync(file)).toBe(false);
    const after = await runPrimCommand(["whoami", "--api", api], env);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain(`not logged in to ${api}: run \`prim login --api ${api}\` or set PRIM_API_KEY`);
    const again = await runPrimCommand(["logout"], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("no key was stored");
  });

  it("tightens a looser pre-existing directory and file to 0700 / 0600 and keeps other APIs", async () => {
    const { dir, file, env } = config();
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    const other = { key: "pk_other", workspace: "ws_1", kind: "scoped", group: "app", tools: ["kv_*"], saved_at: 1 };
    writeFileSync(
      file,
      JSON.stringify({ version: 1, default: "https://api.example.com", apis: { "https://api.example.com": other } }),
    );
    chmodSync(file, 0o644);
    const out = await runPrimCommand(["login", "--api", api, "--key", TOKEN], env);
    expect(out.code).toBe(0);
    expect(mode(dir)).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    const content = stored(file);
    expect(content.default).toBe(api);
    expect(content.apis["https://api.example.com"]).toEqual(other);

    const all = await runPrimCommand(["logout", "--all", "--json"], env);
    expect(JSON.parse(all.stdout)).toEqual({ removed: ["https://api.example.com", api], file });
    expect(existsSync(file)).toBe(false);
  });
});

describe("prim login (error and security)", { timeout: 60_000 }, () => {
  it("a refused key saves nothing, exits 1 and is not printed", async () => {
    const wrong = `pk_wrong_${randomBytes(12).toString("hex")}`;
    const { dir, env } = config({ PRIM_API_KEY: wrong });
    const out = await runPrimCommand(["login", "--api", api], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`the key was refused by ${api} (invalid_token)`);
    expectNoKey(out, wrong);
    expect(existsSync(dir)).toBe(false);
  });

  it("a key without pk_ fails before any network call, without echoing it", async () => {
    const { dir, env } = config({ PRIM_API_KEY: "sk_secret_4d1f9a" });
    // Nothing listens on port 1: a network call would say "could not reach".
    const out = await runPrimCommand(["login", "--api", "http://127.0.0.1:1"], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("not an API key");
    expect(out.stdout + out.stderr).not.toContain("4d1f9a");
    expect(existsSync(dir)).toBe(false);
  });

  it("without a key and without a terminal, says how to give one", async () => {
    const { env } = config();
    const out = await runPrimCommand(["login", "--api", api], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("no API key");
  });

  it("whoami with a stored key the server no longer accepts says to log in again", async () => {
    const { env } = config();
    saveCredential(env, api, { key: "pk_revoked_1", workspace: "local", kind: "workspace", group: null, tools: null });
    const out = await runPrimCommand(["whoami"], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`the stored key is no longer accepted by ${api}; run prim login again`);
    expectNoKey(out, "pk_revoked_1");
  });

  it("a key typed at the prompt is read without echo; Ctrl-C aborts with 130", async () => {
    if (process.platform !== "linux" || !hasScript()) return;
    const { file, env } = config();
    const typed = await atPrompt(env, `${TOKEN}x\u007f\r`);
    expect(typed.code).toBe(0);
    expect(typed.output).toContain(`logged in to ${api}`);
    expect(typed.output).not.toContain(TOKEN.slice(8, 16));
    expect(stored(file).apis[api].key).toBe(TOKEN);

    const other = config();
    const aborted = await atPrompt(other.env, "pk_half\u0003");
    expect(aborted.code).toBe(130);
    expect(existsSync(other.dir)).toBe(false);
  });
});

function hasScript(): boolean {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** `prim login` in a pseudo-terminal (util-linux `script`): types `input` once the prompt shows. */
function atPrompt(env: NodeJS.ProcessEnv, input: string): Promise<{ code: number | null; output: string }> {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, ...primCommand(), "login", "--api", api].map(quote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ROOT, env, stdio: "pipe" });
  children.push(child);
  let output = "";
  let typed = false;
  return new Promise((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (!typed && output.includes("API key for")) {
        typed = true;
        child.stdin.write(input);
      }
    });
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("resolveApi: the key from --key, else PRIM_API_KEY, else the file", () => {
  const A = "https://a.example.com";
  const B = "https://b.example.com/base";
  const fileEnv = () => {
    const env = { PRIM_CONFIG_DIR: join(tempDir(), "prim") };
    const entry = { workspace: "ws", kind: "workspace" as const, group: null, tools: null };
    saveCredential(env, B, { ...entry, key: "pk_b" });
    saveCredential(env, `${A}/`, { ...entry, key: "pk_a" }); // the last login is the default
    return env;
  };

  it("precedence: flag > env > file, for the API and for the key", () => {
    const env = fileEnv();
    expect(resolveApi(env, {})).toEqual({ api: A, key: "pk_a", source: "file" });
    expect(resolveApi({ ...env, PRIM_API_URL: B }, {})).toEqual({ api: B, key: "pk_b", source: "file" });
    expect(resolveApi({ ...env, PRIM_API_URL: A }, { api: `${B}//` })).toEqual({ api: B, key: "pk_b", source: "file" });
    expect(resolveApi({ ...env, PRIM_API_KEY: "pk_env" }, {})).toEqual({
      api: A,
      key: "pk_env",
      source: "PRIM_API_KEY",
    });
    expect(resolveApi({ ...env, PRIM_API_KEY: "pk_env" }, { key: "pk_flag" })).toEqual({
      api: A,
      key: "pk_flag",
      source: "flag",
    });
    // An empty variable counts as unset.
    expect(resolveApi({ ...env, PRIM_API_KEY: "", PRIM_API_URL: "" }, {}).source).toBe("file");
  });

  it("without a file: http://localhost:8787 and a clear error; bad URLs are refused", () => {
    const env = { PRIM_CONFIG_DIR: join(tempDir(), "prim") };
    expect(() => resolveApi(env, {})).toThrow(
      "not logged in to http://localhost:8787: run `prim login --api http://localhost:8787` or set PRIM_API_KEY",
    );
    expect(resolveApi(env, { key: "pk_k" })).toEqual({ api: "http://localhost:8787", key: "pk_k", source: "flag" });
    expect(() => resolveApi(env, { api: "ftp://x", key: "pk_k" })).toThrow("http(s) URL");
    expect(() => resolveApi(env, { api: "not a url", key: "pk_k" })).toThrow("http(s) URL");
  });

  it("credentialsPath: PRIM_CONFIG_DIR, else XDG_CONFIG_HOME/prim, else ~/.config/prim", () => {
    expect(credentialsPath({ PRIM_CONFIG_DIR: "/c", XDG_CONFIG_HOME: "/x", HOME: "/h" })).toBe("/c/credentials.json");
    expect(credentialsPath({ XDG_CONFIG_HOME: "/x", HOME: "/h" })).toBe("/x/prim/credentials.json");
    expect(credentialsPath({ XDG_CONFIG_HOME: "relative", HOME: "/h" })).toBe("/h/.config/prim/credentials.json");
  });

  it("removeCredential says whether it removed anything; the default moves to what remains", () => {
    const env = fileEnv();
    expect(removeCredential(env, "https://nowhere.example.com")).toBe(false);
    expect(removeCredential(env, A)).toBe(true);
    expect(readCredentials(env).default).toBe(B);
    expect(removeCredential(env)).toBe(true);
    expect(existsSync(dirname(credentialsPath(env)))).toBe(true);
    expect(existsSync(credentialsPath(env))).toBe(false);
    expect(removeCredential(env)).toBe(false);
  });

  it("a damaged file is named in the error, without its content", () => {
    const env = { PRIM_CONFIG_DIR: join(tempDir(), "prim") };
    mkdirSync(env.PRIM_CONFIG_DIR, { recursive: true });
    writeFileSync(credentialsPath(env), '{"version":1,"apis":{"x":{"key":"pk_leak_me"');
    const message = (() => {
      try {
        readCredentials(env);
        return "";
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(message).toContain(`the credentials file ${credentialsPath(env)} is not valid JSON`);
    expect(message).not.toContain("leak_me");
  });
});

describe("the scope in words", () => {
  it("ends in read-only for a read-only key (whoami's read_only), whatever its kind", () => {
    const group = { id: "grp_1", name: "app" };
    expect(describeScope({ kind: "workspace", group: null, tools: null, read_only: true })).toBe(
      "every group and tool, read-only",
    );
    expect(describeScope({ kind: "scoped", group, tools: ["kv_*"], read_only: true })).toBe(
      "group app, tools kv_*, read-only",
    );
    expect(describeScope({ kind: "scoped", group, tools: ["kv_*"], read_only: false })).toBe("group app, tools kv_*");
    expect(describeScope({ kind: "workspace", group: null, tools: null })).toBe("every group and tool");
  });
});
