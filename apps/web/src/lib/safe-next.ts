const ORIGIN = "https://prim.invalid";

/**
 * A post-sign-in destination on this site only (never another origin): a path that starts with
 * one `/`, holds no `\` (browsers read `/\evil.test` as `//evil.test`), and still names this
 * origin once parsed the way a browser parses it (tabs and newlines are dropped, so `/\t/x`
 * would become `//x`). Anything else is the workspaces page.
 */
export function safeNext(next: string | null | undefined): string {
  if (typeof next !== "string" || !next.startsWith("/") || next.startsWith("//") || next.includes("\\")) return "/";
  let url: URL;
  try {
    url = new URL(next, ORIGIN);
  } catch {
    return "/";
  }
  return url.origin === ORIGIN ? `${url.pathname}${url.search}${url.hash}` : "/";
}
