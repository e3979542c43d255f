/**
 * A failed procedure call as the pages show it. The server keeps an engine refusal's spec code
 * in the error's `data.error` (`wrong_type`, `fs_conflict`, `plan_limit`, …: src/server/trpc/init.ts).
 */

/** The spec code of a failed call, when the engine gave one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { data?: { error?: unknown } | null } | null)?.data?.error;
  return typeof code === "string" ? code : undefined;
}

/** "forbidden: the message" (or the message alone), for a toast or an alert. */
export function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String((error as { message?: unknown })?.message ?? error);
  const code = errorCode(error);
  return code === undefined ? message : `${code}: ${message}`;
}
