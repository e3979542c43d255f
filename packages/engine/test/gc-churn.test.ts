// better-sqlite3 and the garbage collector, with real processes: from Node 24.19 better-sqlite3
// before 13 aborts the process when a collection destroys a statement while no JS context is
// entered ("Assertion failed: (env) != nullptr" in node::RemoveEnvironmentCleanupHook, from
// ~Statement; WiseLibs/better-sqlite3#1515, nodejs/node#65446). The child (gc-churn-child.ts)
// churns statements through real engines on a real data directory and must exit 0 after every
// operation. It runs on the Node the project pins (the root devDependency `node`) and on the Node
// running this test when that is another one (CI's pass on the oldest supported Node).
//
// A small young generation (--max-semi-space-size=1, through NODE_OPTIONS so the SQL host children
// get it too) makes collections start from allocations every few hundred KB. Such a collection
// runs wherever JS code allocated, and from compiled code it may run with no context entered (gdb:
// v8::Isolate::InContext() false at the failed check): those abort. Forced ones (global.gc) run
// inside a context and never did, so they cannot stand in for them. Measured on Node 24.21.0 with
// better-sqlite3 12.11.1 built for it: 10 runs out of 10 aborted within the first 300 statements
// (without the flag, 3 out of 6); with better-sqlite3 13.2.0, on 24.21.0 and 26.10.0, none.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const ROOT = new URL("../../../", import.meta.url);
const CHILD = fileURLToPath(new URL("./gc-churn-child.ts", import.meta.url));
const HOOKS = fileURLToPath(new URL("scripts/register-source-hooks.mjs", ROOT));
/** The Node the project pins: npm's `node` package, a root devDependency. */
const PINNED = fileURLToPath(new URL("node_modules/node/bin/node", ROOT));

// Two cycles of: 1 group, 8 primitives, 1 table, 20 rounds of (150 lists, 4 kv calls, 2 queue
// calls, 1 exec, 1 batch), 4 audit reads, 3 deletes. Each list prepares a statement.
const OPS = 2 * (1 + 8 + 1 + 20 * (150 + 4 + 2 + 2) + 4 + 3);
const SQL_TEXTS = 2 * 20 * 50;

/** The pinned Node (a missing one fails the test), and this one when it is another. */
const runtimes = [...new Set([existsSync(PINNED) ? realpathSync(PINNED) : PINNED, realpathSync(process.execPath)])].map(
  (path) => ({ path, version: existsSync(path) ? execFileSync(path, ["--version"]).toString().trim() : "missing" }),
);

async function churn(node: string) {
  const run = promisify(execFile)(node, ["--expose-gc", "--import", "tsx", "--import", HOOKS, CHILD, tempDir()], {
    cwd: fileURLToPath(ROOT),
    env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --max-semi-space-size=1`.trim() },
    maxBuffer: 16 * 1024 * 1024,
  });
  const { stdout, stderr } = await run.catch((err: { code?: number; signal?: string; stderr?: string }) => {
    throw new Error(`exit ${err.code ?? err.signal}: ${(err.stderr ?? "").slice(0, 2000)}`);
  });
  return { stdout, stderr };
}

describe("statements collected under churn", () => {
  it.each(runtimes)(
    "a process churning statements through engines exits 0 on Node $version ($path)",
    async ({ path }) => {
      const { stdout, stderr } = await churn(path);
      expect(stderr).not.toContain("Assertion failed");
      const m = /^ops (\d+) statements (\d+) sql (\d+)$/m.exec(stdout);
      expect(m, stdout).not.toBeNull();
      const [, ops, statements, sql] = (m as RegExpExecArray).map(Number);
      expect(ops).toBe(OPS);
      expect(sql).toBe(SQL_TEXTS);
      expect(statements).toBeGreaterThanOrEqual(2 * 20 * 150);
    },
    180_000,
  );
});
