// The environment knobs every benchmark reads, in one place.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Measured seconds per phase: `BENCH_DURATION`, or the benchmark's own default. */
export function benchSeconds(fallback: number): number {
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
  const seconds = Number(process.env.BENCH_DURATION);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : fallback;
}

/** With `BENCH_CPU_PROF` set, where server children write their V8 CPU profiles (`bench/results`). */
export function cpuProfileDir(): string | undefined {
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
  return process.env.BENCH_CPU_PROF ? join(dirname(fileURLToPath(import.meta.url)), "..", "results") : undefined;
}

/** Jobs in the queue benchmark's backlog: `BENCH_BACKLOG`, or `fallback`. */
export function benchBacklog(fallback: number): number {
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
  const jobs = Number(process.env.BENCH_BACKLOG);
  return Number.isSafeInteger(jobs) && jobs > 0 ? jobs : fallback;
}

/** Size of the push benchmark's group in MiB: `BENCH_PUSH_MIB`, or `fallback`. */
export function benchPushMib(fallback: number): number {
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
  const mib = Number(process.env.BENCH_PUSH_MIB);
  return Number.isSafeInteger(mib) && mib >= 16 ? mib : fallback;
}
