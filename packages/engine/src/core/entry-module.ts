import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * The one way the engine runs code beside itself (the SQL host child process, the audit writer
 * thread): a sibling module of the caller, `.ts` when the engine runs from its TypeScript
 * sources (vitest, tsx) and `.js` from `dist/`.
 */
export interface EntryModule {
  path: string;
  /** Whether it is a `.ts` source (then tsx loads it). */
  fromSources: boolean;
}

/**
 * Sibling `name` (no extension) of the module whose `import.meta.url` is `base`. From sources with
 * `PRIM_TEST_BUILT=1` (`npm test` sets it: it builds first), the built sibling in `dist/` when there
 * is one, so a test's SQL hosts and audit threads start without compiling TypeScript.
 */
export function entryModule(base: string, name: string): EntryModule {
  const fromSources = base.endsWith(".ts");
  if (fromSources && process.env.PRIM_TEST_BUILT === "1") {
    const built = fileURLToPath(new URL(`./${name}.js`, base.replace(/\/src\/(?!.*\/src\/)/, "/dist/")));
    if (existsSync(built)) return { path: built, fromSources: false };
  }
  return { path: fileURLToPath(new URL(`./${name}${fromSources ? ".ts" : ".js"}`, base)), fromSources };
}

/** Node arguments for a child process running `entry`: the module, after tsx when it is a source. */
export function childArgs(entry: EntryModule): string[] {
  return entry.fromSources ? ["--import", "tsx", entry.path] : [entry.path];
}

// A worker's execArgv cannot load tsx for its main module, so a source entry is imported
// through tsx's API from a one-line bootstrap (tsx resolved from here, not from the cwd).
const TSX_BOOTSTRAP = `const { workerData } = require("node:worker_threads");
import(workerData.tsx).then(({ tsImport }) => tsImport(workerData.entry, workerData.entry));`;

/** A worker thread running `entry` with `workerData`. */
export function startWorker(entry: EntryModule, workerData: Record<string, unknown> = {}): Worker {
  if (!entry.fromSources) return new Worker(entry.path, { workerData });
  return new Worker(TSX_BOOTSTRAP, { eval: true, workerData: { ...workerData, entry: entry.path, tsx: tsxEsmApi() } });
}

/** tsx's ESM API as a file URL (its package exports name it; a bundler's `require` would pick the CJS build). */
function tsxEsmApi(): string {
  const manifest = createRequire(import.meta.url).resolve("tsx/package.json");
  const exports = JSON.parse(readFileSync(manifest, "utf8")).exports as Record<string, { import: { default: string } }>;
  const api = exports["./esm/api"];
  if (api === undefined) throw new Error("tsx has no ./esm/api export");
  return pathToFileURL(join(dirname(manifest), api.import.default)).href;
}
