// Where a benchmark's verdict is decided: every RATIO line and every FAIL line goes through
// here, so a missed target fails the run (exit code 1) the same way in every benchmark, and
// the runner can list what failed at the end.

const failures: string[] = [];

/**
 * Prints `RATIO <label> <value> (target <target>)`, or `(target none)` for an informational
 * ratio. Higher is better: a value below its target (or not a number) prints a FAIL line and
 * fails the run. Returns whether the target was met (always true without one).
 */
export function printRatio(label: string, value: number, target: number | null): boolean {
  console.log(`RATIO ${label} ${value.toFixed(2)} (target ${target === null ? "none" : target.toFixed(2)})`);
  if (target === null) return true;
  const met = value >= target; // NaN compares false: a ratio that could not be computed misses
  if (!met) printFail(`${label}: ratio ${value.toFixed(3)} below its target ${target.toFixed(2)}`);
  return met;
}

/** Prints `FAIL <message>` (stderr) and fails the run: failed operations, a missed target. */
export function printFail(message: string): void {
  console.error(`FAIL ${message}`);
  failures.push(message);
  process.exitCode = 1;
}

/** Everything that failed the run so far, in order. */
export function recordedFailures(): readonly string[] {
  return failures;
}
