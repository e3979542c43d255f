/** Group and primitive names: 1–63 chars of `a-z 0-9 - _ .`, starting with a letter or digit. */
export const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export function isValidName(name: string): boolean {
  return NAME_RE.test(name);
}
