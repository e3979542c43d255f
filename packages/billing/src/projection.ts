import { PRO } from "./plans.js";

const GIB = 1024 ** 3;

export interface Projection {
  /** The month's operations so far, extended linearly to the whole month. */
  projectedOperations: number;
  /** Operations past the included 25M at that pace. */
  operationsOverage: number;
  operationsCents: number;
  /** Storage past the included 50 GB now, in GB. */
  storageOverGb: number;
  /** That storage kept for the whole month, at $0.25 per GB-month. */
  storageCents: number;
  totalCents: number;
}

/**
 * This month's projected Pro overage for the billing page: operations at the month's pace so
 * far, storage as it stands now kept for the month. An estimate; the invoice is Stripe's, from
 * the meter events of each completed day.
 */
export function projectOverage(input: { operations: number; storageBytes: number; now: Date }): Projection {
  const { now } = input;
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const elapsed = Math.max(now.getTime() - start, 3_600_000) / (end - start);
  const projectedOperations = Math.round(input.operations / Math.min(1, elapsed));
  const operationsOverage = Math.max(0, projectedOperations - PRO.includedOperations);
  const operationsCents = Math.round(operationsOverage * Number(PRO.operationCentsDecimal));
  const storageOverGb = Math.max(0, input.storageBytes - PRO.includedStorageBytes) / GIB;
  const storageCents = Math.round(storageOverGb * 1000 * Number(PRO.storageMilliGbMonthCentsDecimal));
  return {
    projectedOperations,
    operationsOverage,
    operationsCents,
    storageOverGb,
    storageCents,
    totalCents: operationsCents + storageCents,
  };
}
