// Benchmark runner: `npm run bench -- <name>` runs `run()` exported by bench/<name>.ts.
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

interface BenchModule {
  run(): Promise<void>;
}

const benchDir = dirname(fileURLToPath(import.meta.url));
// Files that are not benchmarks themselves: this runner and helpers (child servers etc.).
const NOT_BENCHMARKS = new Set(["run"]);

function availableBenchmarks(): string[] {
  return readdirSync(benchDir)
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => file.slice(0, -".ts".length))
    .filter((name) => !NOT_BENCHMARKS.has(name) && !name.includes("-server") && !name.startsWith("_"))
    .sort();
}

async function main(): Promise<void> {
  const name = process.argv[2];
  const file = name === undefined ? undefined : join(benchDir, `${name}.ts`);
  if (name === undefined || file === undefined || !/^[\w-]+$/.test(name) || !existsSync(file)) {
    if (name !== undefined) console.error(`unknown benchmark '${name}'`);
    console.error("usage: npm run bench -- <name>");
    console.error(`available: ${availableBenchmarks().join(", ") || "(none)"}`);
    process.exit(1);
  }
  const mod = (await import(pathToFileURL(file).href)) as Partial<BenchModule>;
  if (typeof mod.run !== "function") {
    console.error(`bench/${name}.ts does not export a run() function`);
    process.exit(1);
  }
  await mod.run();
}

main().then(
  // autocannon and fetch keep-alive sockets can hold the loop open briefly; the run is over.
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
