import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { ManualClock } from "../src/core/clock.js";
import type { LocalEngineOptions } from "../src/engine.js";
import { Engine } from "../src/engine.js";

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-engine-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A local engine on a fresh data directory with a manual clock; closed after the test. */
export function testEngine(options: Partial<LocalEngineOptions> = {}) {
  const clock = new ManualClock(1_800_000_000_000);
  const dataDir = options.dataDir ?? tempDir();
  const engine = Engine.openLocal({ dataDir, clock, ...options });
  cleanups.push(() => engine.close());
  return { engine, clock, dataDir };
}
