/** A post-sign-in destination on this site only (never another origin). */
export function safeNext(next: string | null | undefined): string {
  return typeof next === "string" && next.startsWith("/") && !next.startsWith("//") ? next : "/";
}
