import { createRequire } from "node:module";

/**
 * A warning when this Node and the installed better-sqlite3 are known to crash together, or
 * null. From Node 24.19 `node::ObjectWrap` registers environment cleanup hooks, and
 * better-sqlite3 before 13 then aborts the process when an idle GC collects a statement
 * ("Assertion failed: (env) != nullptr"; WiseLibs/better-sqlite3#1515). better-sqlite3 13
 * fixes it but needs Node >= 22, and Prim still supports Node 20, so it stays on 12: on such a
 * Node the engine can die at any moment (no acknowledged write is lost; SQLite's WAL keeps it).
 */
export function runtimeWarning(
  nodeVersion = process.versions.node,
  sqliteVersion = betterSqliteVersion(),
): string | null {
  const [major = 0, minor = 0] = nodeVersion.split(".").map(Number);
  const affected = (major === 24 && minor >= 19) || major >= 25;
  const sqliteMajor = Number(sqliteVersion.split(".")[0]);
  if (!affected || sqliteMajor >= 13) return null;
  return (
    `warning: Node ${nodeVersion} with better-sqlite3 ${sqliteVersion} can abort the process on garbage collection ` +
    "(better-sqlite3#1515); use Node 20.19+, 22 or 24.18 until Prim moves to better-sqlite3 13"
  );
}

function betterSqliteVersion(): string {
  // The engine's copy, resolved the way the engine resolves it.
  const require = createRequire(import.meta.resolve("@prim/engine"));
  return (require("better-sqlite3/package.json") as { version: string }).version;
}
