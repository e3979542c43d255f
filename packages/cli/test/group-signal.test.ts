// A signal sent to `prim dev`'s whole process group, as a terminal's Ctrl-C or a supervisor's
// `kill -TERM -<pgid>` does, reaches the SQL host children too, and they die before the engine
// closes. The shutdown must still be clean: exit code 0, a line saying what closed, no error.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { primCommand, type RunningPrim, startPrim } from "@prim/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { childPids } from "./write-lanes.js";

const groups: number[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {} // already gone
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts `prim dev` as the leader of a new process group. */
async function startDetached(dir: string): Promise<RunningPrim> {
  const args = ["dev", "--port", "0", "--data", join(dir, "data")];
  const prim = await startPrim(primCommand(), args, [], undefined, { detached: true });
  groups.push(prim.child.pid as number);
  return prim;
}

async function call(base: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Resolves with the exit code and signal once the process and its output streams have ended. */
function ended(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
}

describe("prim dev under a process-group signal", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "exits 0 and reports only what it closed when its group gets %s",
    { timeout: 60_000 },
    async (signal) => {
      const dir = mkdtempSync(join(tmpdir(), "prim-group-"));
      dirs.push(dir);
      const prim = await startDetached(dir);
      await call(prim.url, "/v1/groups", { name: "app" });
      const db = (await call(prim.url, "/v1/primitives", { name: "d", type: "db", group: "app" })).id as string;
      // A write goes to a SQL host, so at least one host process is running when the signal comes.
      await call(prim.url, `/v1/primitives/${db}/query`, { sql: "CREATE TABLE t (v TEXT)" });
      await call(prim.url, `/v1/primitives/${db}/query`, { sql: "INSERT INTO t VALUES ('x')" });
      expect(childPids(prim.child.pid as number).length).toBeGreaterThan(0);

      const end = ended(prim.child);
      process.kill(-(prim.child.pid as number), signal);
      const { code } = await end;
      const output = prim.output();
      expect(output).not.toContain("internal_error");
      expect(output).not.toMatch(/^\s+at /m); // no stack frame
      // What it closed, and nothing else.
      expect(output.trim().split("\n")).toEqual([
        expect.stringMatching(/^prim dev: listening on /),
        `prim dev: ${signal}, closing`,
        expect.stringMatching(/^prim dev: closed http:\/\/localhost:\d+ and the data in /),
      ]);
      expect(code).toBe(0);
    },
  );
});
