// Runs the real `prim` command as a child process for the CLI tests: the CLI's TypeScript sources
// under tsx, with `@prim/*` resolved to sources by a loader hook, so a test never runs a stale
// `dist/` and needs no build (like every other test). The spawned node process is the engine
// itself. PRIM_TEST_BUILT=1 runs the built `bin/prim.js` instead (build first: npm run build).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGES = new URL("../../", import.meta.url);
export const ROOT = fileURLToPath(new URL("../", PACKAGES));
export const BIN = fileURLToPath(new URL("cli/bin/prim.js", PACKAGES));
const BUILT = process.env.PRIM_TEST_BUILT === "1";

/** The node arguments that run `prim` (`dir` receives the launcher files when needed). */
export function primCommand(dir: string): string[] {
  if (BUILT) return [BIN];
  writeFileSync(
    join(dir, "hooks.mjs"),
    `export async function resolve(specifier, context, next) {
  const m = /^@prim\\/(engine|http|sdk|cli|mcp)$/.exec(specifier);
  return next(m ? new URL(m[1] + "/src/index.ts", ${JSON.stringify(PACKAGES.href)}).href : specifier, context);
}\n`,
  );
  writeFileSync(
    join(dir, "launch.mjs"),
    `import { register } from "node:module";
register("./hooks.mjs", import.meta.url);
const { main } = await import(${JSON.stringify(new URL("cli/src/main.ts", PACKAGES).href)});
main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});\n`,
  );
  return ["--import", "tsx", join(dir, "launch.mjs")];
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
