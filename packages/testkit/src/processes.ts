// Runs the real `prim` command as a child process (the CLI's tests, and any suite that drives
// `prim`): the CLI's TypeScript sources (packages/cli/test/run-cli.ts, spawned by its path) under
// tsx, with `@prim/*` resolved to sources by a loader hook, so a test never runs a stale `dist/`
// and needs no build (like every other test). The spawned node process is the engine
// itself. PRIM_TEST_BUILT=1 runs the built `bin/prim.js` instead (build first: npm run build).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT_URL = new URL("../../../", import.meta.url);
export const ROOT = fileURLToPath(ROOT_URL);
export const BIN = fileURLToPath(new URL("packages/cli/bin/prim.js", ROOT_URL));
const BUILT = process.env.PRIM_TEST_BUILT === "1";

/** Node arguments that run a test entry from the TypeScript sources, `@prim/*` resolved to sources. */
export const FROM_SOURCES = [
  "--import",
  "tsx",
  "--import",
  fileURLToPath(new URL("scripts/register-source-hooks.mjs", ROOT_URL)),
];

/** The node arguments that run `prim`. */
export function primCommand(): string[] {
  if (BUILT) return [BIN];
  return [...FROM_SOURCES, fileURLToPath(new URL("packages/cli/test/run-cli.ts", ROOT_URL))];
}

export interface RunningPrim {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far. */
  output: () => string;
}

/**
 * Runs `prim <command args>` (e.g. `dev --port 0 …`) and waits for its "listening on" line;
 * `env` replaces the environment (default: this process's); `detached` makes it the leader of
 * a new process group (its pid is the group id), as a terminal or a supervisor starts it.
 */
export function startPrim(
  command: string[],
  args: string[],
  children: ChildProcess[],
  env?: NodeJS.ProcessEnv,
  options: { detached?: boolean } = {},
): Promise<RunningPrim> {
  const child = spawn(process.execPath, [...command, ...args], {
    cwd: ROOT,
    env,
    detached: options.detached ?? false,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ child, url: match[1] as string, output: () => output });
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code, signal) => reject(new Error(`prim exited (${code ?? signal}): ${output}`)));
  });
}

/** Runs `prim <args>` to completion: its exit code and what it printed. */
export async function runPrimCommand(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [...primCommand(), ...args], { cwd: ROOT, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}
