/**
 * `value` when a lookup found it: a test that needs an object the files should have (a stage, a
 * container, a Secret) fails on a line naming what was missing, not on a TypeError further on.
 */
export function must<T>(value: T, what: string): NonNullable<T> {
  if (value === undefined || value === null) throw new Error(`${what}: missing`);
  return value;
}
