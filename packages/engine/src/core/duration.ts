import { z } from "zod";

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION_RE = /^(\d+)(ms|s|m|h|d)?$/;

/** Longest duration any field accepts (ten years); keeps expiry arithmetic exact. */
export const MAX_DURATION_MS = 3650 * UNIT_MS.d;

/**
 * Parses `250ms`, `30s`, `5m`, `1h`, `7d`; a bare number string means seconds.
 * Returns milliseconds, or null when the text is not a duration.
 */
export function parseDuration(text: string): number | null {
  const match = DURATION_RE.exec(text.trim());
  if (!match) return null;
  const amount = Number(match[1]);
  const unit = (match[2] ?? "s") as keyof typeof UNIT_MS;
  const ms = amount * UNIT_MS[unit];
  return Number.isSafeInteger(ms) ? ms : null;
}

const DURATION_HINT = "a duration such as '250ms', '30s', '5m', '1h', '7d' (a bare number means seconds)";

function durationSchema(opts: { allowMs: boolean; min: number }) {
  const base = opts.allowMs ? z.union([z.string(), z.number()]) : z.string();
  return base.transform((value, ctx) => {
    let ms: number | null;
    if (typeof value === "number") {
      ms = Number.isSafeInteger(value) ? value : null;
    } else {
      ms = parseDuration(value);
    }
    if (ms === null) {
      ctx.addIssue({
        code: "custom",
        message: `expected ${DURATION_HINT}${opts.allowMs ? " or an integer number of milliseconds" : ""}`,
      });
      return z.NEVER;
    }
    if (ms < opts.min || ms > MAX_DURATION_MS) {
      ctx.addIssue({
        code: "custom",
        message: `must be between ${opts.min}ms and ${MAX_DURATION_MS / UNIT_MS.d}d`,
      });
      return z.NEVER;
    }
    return ms;
  });
}

/** A duration string (`ttl`, `expires_in`), at least 1ms; parsed to milliseconds. */
export const durationString = durationSchema({ allowMs: false, min: 1 });
/** A queue duration: a string, or an integer number of milliseconds; may be 0. */
export const queueDuration = durationSchema({ allowMs: true, min: 0 });
