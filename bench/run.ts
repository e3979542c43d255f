// Benchmark runner: `npm run bench -- <name>` awaits `run()` exported by bench/<name>.ts.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { recordedFailures } from "./lib/verdict.js";

interface BenchModule {
  run(): Promise<void>;
}

const benchDir = dirname(fileURLToPath(import.meta.url));

/** Top-level bench/*.ts files, except this runner and child-process entry points (*-server.ts). */
function availableBenchmarks(): string[] {
  return readdirSync(benchDir)
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => file.slice(0, -".ts".length))
    .filter((name) => name !== "run" && !name.endsWith("-server"))
    .sort();
}

async function main(): Promise<void> {
  const name = process.argv[2];
  const available = availableBenchmarks();
  if (name === undefined || !available.includes(name)) {
    if (name !== undefined) console.error(`unknown benchmark '${name}'`);
    console.error("usage: npm run bench -- <name>");
    console.error(`available: ${available.join(", ") || "(none)"}`);
    process.exit(1);
  }
  const mod = (await import(pathToFileURL(join(benchDir, `${name}.ts`)).href)) as Partial<BenchModule>;
  if (typeof mod.run !== "function") {
    console.error(`bench/${name}.ts does not export a run() function`);
    process.exit(1);
  }
  await mod.run();
  // Every RATIO below its target and every failed phase went through lib/verdict.ts.
  const failed = recordedFailures();
  if (failed.length > 0) console.error(`\n${name}: ${failed.length} failure(s); exit code 1`);
}

main().then(
  // Keep-alive sockets from fetch/autocannon can hold the event loop open; the run is over.
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
