// The overage arithmetic without Stripe or Postgres: the days' meter values sum to the month's
// overage computed by hand, whatever order the runs come in; storage in thousandths of a
// GB-month; the billing page's projection.
import { describe, expect, it } from "vitest";
import { type DayFigures, planDays, projectOverage, storageOverageMilli } from "../src/index.js";

const GIB = 1024 ** 3;
const M = 1_000_000;

/** November 2026 (30 days): 1.5M operations a day, storage growing from 40 GiB by 1 GiB a day. */
function november(): DayFigures[] {
  return Array.from({ length: 30 }, (_, i) => ({
    day: `2026-11-${String(i + 1).padStart(2, "0")}`,
    operations: 1.5 * M,
    storageBytes: (40 + i) * GIB,
  }));
}

describe("the days' meter values", () => {
  it("sum to the month's operations past 25M, each day carrying its increment", () => {
    const rows = planDays(november(), [], "2026-11-01", "2026-11-01", "2026-11-30");
    const ops = rows.filter((r) => r.meter === "operations");
    expect(ops).toHaveLength(30);
    // 45M in the month: 20M over. Day 17 crosses 25M (17 × 1.5M = 25.5M: 0.5M over).
    expect(ops.reduce((sum, r) => sum + r.value, 0)).toBe(20 * M);
    expect(ops.find((r) => r.day === "2026-11-16")?.value).toBe(0);
    expect(ops.find((r) => r.day === "2026-11-17")?.value).toBe(0.5 * M);
    expect(ops.find((r) => r.day === "2026-11-18")?.value).toBe(1.5 * M);
  });

  it("storage: each day over 50 GiB as thousandths of a GB-month (1/30 of a month a day)", () => {
    const rows = planDays(november(), [], "2026-11-01", "2026-11-01", "2026-11-30");
    const storage = rows.filter((r) => r.meter === "storage");
    // Days 12..30 hold 51..69 GiB: 1..19 GiB over, each for 1/30 month.
    const byHand = Array.from({ length: 19 }, (_, i) => Math.round(((i + 1) * 1000) / 30)).reduce((a, b) => a + b, 0);
    expect(storage.reduce((sum, r) => sum + r.value, 0)).toBe(byHand);
    expect(storageOverageMilli(80 * GIB, "2026-02-10")).toBe(Math.round((30 * 1000) / 28));
    expect(storageOverageMilli(50 * GIB, "2026-11-10")).toBe(0);
  });

  it("plans only days without a row, and a later run continues from what was reported", () => {
    const first = planDays(november(), [], "2026-11-01", "2026-11-01", "2026-11-20");
    const second = planDays(november(), first, "2026-11-01", "2026-11-01", "2026-11-30");
    expect(second.every((r) => r.day > "2026-11-20")).toBe(true);
    const all = [...first, ...second].filter((r) => r.meter === "operations");
    expect(all.reduce((sum, r) => sum + r.value, 0)).toBe(20 * M);
  });

  it("carries the storage high-water mark over days without usage, across the month's start", () => {
    const usage: DayFigures[] = [{ day: "2026-10-20", operations: 0, storageBytes: 60 * GIB }];
    const rows = planDays(usage, [], "2026-11-01", "2026-11-01", "2026-11-03");
    expect(rows.filter((r) => r.meter === "storage").map((r) => r.value)).toEqual([333, 333, 333]);
  });

  it("leaves out days before the window but counts their operations toward the month", () => {
    const rows = planDays(november(), [], "2026-11-01", "2026-11-25", "2026-11-30");
    const ops = rows.filter((r) => r.meter === "operations");
    expect(ops.map((r) => r.day)[0]).toBe("2026-11-25");
    // Through day 24: 36M (11M over, never reported: out of the window); day 25 carries 12.5M − 0.
    expect(ops[0]?.value).toBe(12.5 * M);
  });
});

describe("the billing page's projection", () => {
  it("extends the month's pace and prices the overage", () => {
    // Half of November gone (15 days) with 15M operations: 30M projected, 5M over = $2.50.
    const p = projectOverage({ operations: 15 * M, storageBytes: 60 * GIB, now: new Date("2026-11-16T00:00:00Z") });
    expect(p.projectedOperations).toBe(30 * M);
    expect(p.operationsCents).toBe(250);
    // 10 GB over for the month at $0.25 = $2.50.
    expect(p.storageCents).toBe(250);
    expect(p.totalCents).toBe(500);
  });
});
