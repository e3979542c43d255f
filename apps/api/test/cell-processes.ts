// Prim's processes as real child processes, for the multi-cell tests (cells-crash.test.ts,
// cells-simulation.test.ts): an api cell (`startApi`), apps/mcp, and the `prim` CLI, all from
// their TypeScript sources (tsx, `@prim/*` resolved to sources as in packages/cli/test). Run as
// a program, this file is the entry of those children: `cell-processes.ts api|mcp`.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FROM_SOURCES, primCommand, ROOT } from "@prim/testkit";

const SELF = fileURLToPath(import.meta.url);

export interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/** This process's environment with `extra` over it (the children need PATH, HOME, TMPDIR). */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}

/**
 * Runs `prim <args>` to its end: exit code or signal and what it printed. `onStderrLine` sees
 * each line of stderr as it comes (a move's progress). Killed (SIGKILL) after `timeoutMs`.
 */
export function runPrim(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { timeoutMs?: number; onStderrLine?: (line: string) => void } = {},
): Promise<Exited> {
  const started = Date.now();
  const child = spawn(process.execPath, [...primCommand(), ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    stderr += text;
    partial += text;
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) options.onStderrLine?.(line);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

export interface RunningProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Sends `signal` (default SIGKILL) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts this file as `role` and waits until its output matches every pattern in `ready`
 * (each must capture one URL); answers the URLs in that order.
 */
function startRole(
  role: "api" | "mcp",
  env: NodeJS.ProcessEnv,
  ready: RegExp[],
  timeoutMs: number,
): Promise<RunningProcess & { urls: string[] }> {
  const child = spawn(process.execPath, [...FROM_SOURCES, SELF, role], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let exited = false;
  const exit = new Promise<void>((done) =>
    child.on("exit", () => {
      exited = true;
      done();
    }),
  );
  const running: RunningProcess = {
    child,
    output: () => output,
    kill: async (signal = "SIGKILL") => {
      if (!exited) child.kill(signal);
      await exit;
    },
  };
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`${role} did not start within ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const urls = ready.map((re) => re.exec(output)?.[1]);
      if (urls.every((u) => u !== undefined)) {
        clearTimeout(timer);
        done({ ...running, urls: urls as string[] });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`${role} exited (${code ?? signal}) while starting: ${output}`));
    });
  });
}

/** An api cell (apps/api `main`): its public URL and its internal listener's URL. */
export async function startApiProcess(
  env: NodeJS.ProcessEnv,
  timeoutMs = 45_000,
): Promise<RunningProcess & { url: string; internalUrl: string }> {
  const started = await startRole(
    "api",
    env,
    [/api listening on (http:\/\/\S+)/, /internal invoke on (http:\/\/\S+)/],
    timeoutMs,
  );
  return { ...started, url: started.urls[0] as string, internalUrl: started.urls[1] as string };
}

/** apps/mcp (its `main`): the URL of its `/mcp` endpoint. */
export async function startMcpProcess(
  env: NodeJS.ProcessEnv,
  timeoutMs = 45_000,
): Promise<RunningProcess & { mcpUrl: string }> {
  const started = await startRole("mcp", env, [/mcp listening on (http:\/\/\S+)/], timeoutMs);
  return { ...started, mcpUrl: started.urls[0] as string };
}

// As a program: the child's entry.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  const role = process.argv[2];
  const entries: Record<string, string> = { api: "../src/start.ts", mcp: "../../mcp/src/start.ts" };
  const entry = role === undefined ? undefined : entries[role];
  if (entry === undefined) throw new Error(`cell-processes.ts: unknown role '${role}' (api, mcp)`);
  // A computed specifier: the role's entry is loaded only in the child that runs it.
  const { main } = (await import(new URL(entry, import.meta.url).href)) as { main: () => Promise<void> };
  await main();
}
