// Parent side of a benchmark child process: fork a TypeScript file under tsx, wait for typed
// IPC messages from it, and stop it at the end.
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync } from "node:fs";

export interface Child<In extends { type: string }, Out extends { type: string }> {
  process: ChildProcess;
  send(message: In): void;
  /** Resolves with the next message of this type; rejects if the child exits first. */
  next<T extends Out["type"]>(type: T): Promise<Extract<Out, { type: T }>>;
  /** Sends `stop` (the child's cue to close and exit), then SIGKILLs after 5 s. */
  stop(): Promise<void>;
}

/** With `cpuProfileDir`, the child runs with `--cpu-prof` and writes its profile there on exit. */
export function forkTs<In extends { type: string }, Out extends { type: string }>(
  file: string,
  options: { cpuProfileDir?: string; args?: string[] } = {},
): Child<In, Out> {
  const execArgv = ["--import", "tsx"];
  if (options.cpuProfileDir !== undefined) {
    mkdirSync(options.cpuProfileDir, { recursive: true });
    execArgv.push("--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`);
  }
  const child = fork(file, options.args ?? [], { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  return {
    process: child,
    send(message) {
      child.send(message);
    },
    next<T extends Out["type"]>(type: T) {
      return new Promise<Extract<Out, { type: T }>>((resolve, reject) => {
        const onMessage = (raw: unknown) => {
          if ((raw as Out).type !== type) return;
          cleanup();
          resolve(raw as Extract<Out, { type: T }>);
        };
        const onExit = (code: number | null) => {
          cleanup();
          reject(new Error(`${file} exited (code ${code}) while the parent waited for '${type}'`));
        };
        const cleanup = () => {
          child.off("message", onMessage);
          child.off("exit", onExit);
        };
        child.on("message", onMessage);
        child.on("exit", onExit);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: "stop" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A server child's CPU time so far (user + system, µs); every bench server answers `cpu`. */
export async function childCpuMicros(child: {
  send(message: { type: "cpu" }): void;
  next(type: "cpu"): Promise<{ user: number; system: number }>;
}): Promise<number> {
  child.send({ type: "cpu" });
  const usage = await child.next("cpu");
  return usage.user + usage.system;
}
