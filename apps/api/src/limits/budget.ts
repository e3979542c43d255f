import { amountOf, budgetKey } from "@prim/db";
import { type KeyBudget, type Principal, ServiceError } from "@prim/engine";

/**
 * A key's operation budget (keys for agents, issue 41), counted in the limit script's own round
 * trip (script.ts, ARGV 6–8): only metered operations count, as the plan counter counts them.
 * A period's budget spent answers 429 `rate_limited` with `Retry-After` until its refill; a
 * total spent answers 403 `forbidden` naming the budget.
 */

/** The script's budget arguments for a call: none without a budget or for an unmetered call. */
export function budgetArgs(principal: Principal, units: number): [string, number, string] {
  const budget = principal.budget;
  if (budget === undefined || units === 0) return ["", 0, ""];
  return [budgetKey(principal.workspace, principal.actor), amountOf(budget), perOf(budget)];
}

const perOf = (budget: KeyBudget) => ("total" in budget ? "total" : budget.per);

/** The refusal of a call over its key's budget; `retryAfter` 0 means it never refills. */
export function budgetRefusal(budget: KeyBudget, retryAfter: number): ServiceError {
  if ("total" in budget) {
    return new ServiceError(
      "forbidden",
      `this key's budget of ${budget.total.toLocaleString("en")} operations is spent; it does not refill (make a new key)`,
    );
  }
  return new ServiceError(
    "rate_limited",
    `this key's budget of ${budget.limit.toLocaleString("en")} operations per ${budget.per} is spent; it refills at the next UTC ${budget.per}, in ${retryAfter} s`,
    { headers: { "Retry-After": String(Math.max(1, retryAfter)) } },
  );
}

/** A budgeted key's metered call while Redis does not answer: refused, to be retried. */
export function budgetUnchecked(): ServiceError {
  return new ServiceError(
    "rate_limited",
    "this key's budget cannot be counted right now (the limits store does not answer); retry after 1 s",
    { headers: { "Retry-After": "1" } },
  );
}
