// Formatting shared by every page: one locale ("en"), binary units, UTC-free local dates.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/** 1536 → "1.5 KiB"; 0 → "0 B"; whole bytes below 1 KiB. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value >= 100 ? Math.round(value) : Number(value.toFixed(value >= 10 ? 1 : 2))} ${UNITS[unit]}`;
}

/** 12345 → "12,345". */
export function formatNumber(value: number): string {
  return value.toLocaleString("en");
}

function toDate(value: Date | string | number): Date {
  return value instanceof Date ? value : new Date(value);
}

/** A date and time in the reader's zone: "Nov 27, 2026, 07:42". */
export function formatDate(value: Date | string | number, options: { time?: boolean } = {}): string {
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return "—";
  return date.toLocaleString("en", {
    year: "numeric",
    month: "short",
    day: "numeric",
    ...(options.time === false ? {} : { hour: "2-digit", minute: "2-digit", hourCycle: "h23" }),
  });
}

const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 30],
  ["month", 12],
  ["year", Number.POSITIVE_INFINITY],
];

/** "3 minutes ago", "in 2 days", "now" (relative to `now`, default the current time). */
export function formatRelative(value: Date | string | number, now: Date | number = Date.now()): string {
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return "—";
  let delta = (date.getTime() - (now instanceof Date ? now.getTime() : now)) / 1000;
  if (Math.abs(delta) < 5) return "now";
  const format = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  for (const [unit, size] of STEPS) {
    if (Math.abs(delta) < size) return format.format(Math.round(delta), unit);
    delta /= size;
  }
  return format.format(Math.round(delta), "year");
}
