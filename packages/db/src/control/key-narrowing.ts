import { type KeyBudget, ServiceError } from "@prim/engine";
import { amountOf } from "./key-budgets.js";

/**
 * What a minted key may be (issue 41, "Minted keys"): at most as wide as its parent on every
 * property. Each property has one rule below, taking the parent's value and what the caller
 * asked for, and answering the child's value or refusing with 403 `forbidden` naming the
 * property. An omitted property inherits the parent's value (the widest the child may have).
 * New properties (expiry, budget, IP allowlist) add one rule each to `narrowKey`.
 */

/** The properties a parent key has and a child inherits or narrows. */
export interface KeyScope {
  /** A group id, or null for every group. */
  groupId: string | null;
  /** Tool names or patterns, or null for every tool. */
  tools: string[] | null;
  readOnly: boolean;
}

/** The deepest a minted key may be (a root key is depth 0). */
export const MAX_KEY_DEPTH = 8;

export const wider = (property: string, why: string) =>
  new ServiceError("forbidden", `${property}: a minted key cannot be wider than its parent (${why})`);

/**
 * Whether every tool name `child` matches is matched by `parent`, decided on the patterns alone
 * (so it stays true for tools added later): the same pattern, `*`, or a parent ending in its
 * only `*` (`fs_*`) whose literal prefix the child starts with (`fs_read`, `fs_re*`). Anything
 * else (a `*` inside the parent, `f*` under `fs_*`) is refused, though it might be narrower:
 * sound, not complete.
 */
export function patternCovers(parent: string, child: string): boolean {
  if (parent === child || parent === "*") return true;
  const star = parent.indexOf("*");
  if (star !== parent.length - 1) return false;
  return child.startsWith(parent.slice(0, star));
}

/** The child's tools: each asked pattern covered by one of the parent's, or the parent's own. */
export function narrowTools(parent: string[] | null, asked: string[] | undefined): string[] | null {
  if (asked === undefined) return parent;
  if (parent === null) return asked;
  for (const tool of asked) {
    if (!parent.some((pattern) => patternCovers(pattern, tool))) {
      throw wider("tools", `'${tool}' is not covered by the parent's tools ${parent.join(", ")}`);
    }
  }
  return asked;
}

/** The child's group: the parent's one group, or (from an all-groups parent) any group or all. */
export function narrowGroup(parent: string | null, asked: string | null | undefined): string | null {
  if (asked === undefined) return parent;
  if (parent === null) return asked;
  if (asked !== parent) throw wider("group", "the parent reaches one group only");
  return asked;
}

/** The child's read-only flag: a read-only parent mints read-only children only. */
export function narrowReadOnly(parent: boolean, asked: boolean | undefined): boolean {
  if (asked === undefined) return parent;
  if (parent && !asked) throw wider("read_only", "the parent is read-only");
  return asked;
}

/**
 * The child's budget: any (or none) under a parent without one; under a budgeted parent, one of
 * the same kind (a total from a total, the same period from a per-day or per-month budget) and
 * no larger, which the parent then gives up (carved out: key-budgets.ts). A child without a
 * budget under a budgeted parent would spend without limit, so it is refused.
 */
export function narrowBudget(parent: KeyBudget | null, asked: KeyBudget | undefined): KeyBudget | null {
  if (parent === null) return asked ?? null;
  const parentKind = "total" in parent ? "a total" : `per ${parent.per}`;
  if (asked === undefined) {
    throw wider("budget", `the parent has a budget (${parentKind}): give the child one, carved out of it`);
  }
  const askedKind = "total" in asked ? "a total" : `per ${asked.per}`;
  if (askedKind !== parentKind) throw wider("budget", `the parent's budget is ${parentKind}, the child's must be too`);
  const mine = amountOf(parent);
  if (amountOf(asked) > mine)
    throw wider("budget", `the parent's whole budget is ${mine.toLocaleString("en")} operations`);
  return asked;
}

/** The child's depth, or 403 past MAX_KEY_DEPTH. */
export function childDepth(parentDepth: number): number {
  if (parentDepth + 1 > MAX_KEY_DEPTH) throw wider("depth", `keys nest at most ${MAX_KEY_DEPTH} deep`);
  return parentDepth + 1;
}

/** Every rule at once: the child's scope (`asked.groupId` already resolved to an id). */
export function narrowKey(
  parent: KeyScope,
  asked: { groupId?: string | null; tools?: string[]; readOnly?: boolean },
): KeyScope {
  return {
    groupId: narrowGroup(parent.groupId, asked.groupId),
    tools: narrowTools(parent.tools, asked.tools),
    readOnly: narrowReadOnly(parent.readOnly, asked.readOnly),
  };
}
