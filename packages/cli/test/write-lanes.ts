// What the crash and power-loss tests share: lanes of acknowledged writes cut off by a kill,
// and waiting for processes to go away.
import type { ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

/** A load's state: `killed` once the engine is cut off; a write failing before that is a bug. */
export interface WriteState {
  killed: boolean;
  inFlight: number;
  errors: string[];
}

/** Runs `write(i)` in `lanes` loops until `state.killed`; `onAck` only once a 2xx answer arrived. */
export function writeLanes<T>(
  state: WriteState,
  lanes: number,
  write: (i: number) => Promise<T>,
  onAck: (i: number, result: T) => void,
): Promise<unknown> {
  let next = 0;
  const lane = async () => {
    while (!state.killed) {
      const i = next++;
      state.inFlight++;
      try {
        onAck(i, await write(i));
      } catch (err) {
        // Writes cut off by the kill were never acknowledged; a failure before it is a test bug.
        if (!state.killed) state.errors.push(String(err));
      } finally {
        state.inFlight--;
      }
    }
  };
  return Promise.all(Array.from({ length: lanes }, lane));
}

/** Resolves once node has reaped the child (so its pid no longer looks alive to the lock). */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.on("exit", (code) => resolve(code));
  });
}

/** Gone or a zombie (an orphan's new parent may never reap it). */
export function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

/** A process's direct children (Linux `/proc`): the SQL hosts a killed `prim dev` leaves behind. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * What a crash test leaves behind — the `prim dev` children it started, the SQL hosts a kill
 * orphaned, its data directories — and `clear()` (for `afterEach`) that kills and removes them.
 */
export function crashLeftovers() {
  const children: ChildProcess[] = [];
  const pids: number[] = [];
  const dirs: string[] = [];
  const clear = () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    for (const pid of pids.splice(0)) if (!gone(pid)) process.kill(pid, "SIGKILL");
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  };
  return { children, pids, dirs, clear };
}
