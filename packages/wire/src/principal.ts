/**
 * Who is calling. `account`: workspace key or local root token; `local`: tokenless localhost
 * (account-level, actor `local`); `scoped`: a key narrowed to a group and/or tools; `oauth`:
 * like scoped, MCP only.
 */
export interface Principal {
  kind: "account" | "local" | "scoped" | "oauth";
  /**
   * The workspace the credential belongs to (`local` for the local engine). An engine answers
   * only principals of its own workspace (engine.ts `invoke`, ops/scope.ts).
   */
  workspace: string;
  /** Audit actor: `key:<id>` or `local`. */
  actor: string;
  /** Group id the principal is bound to; null means every group. */
  groupId: string | null;
  /** Tool allowlist patterns (`kv_*`, `db_query`); null means every tool. */
  tools: readonly string[] | null;
  /**
   * The workspace's display name when the edge that resolved the credential knows it (cloud
   * keys: read with the key, so a rename shows once the key's cache entry expires). For what
   * `GET /v1/whoami` shows only; nothing decides by it.
   */
  workspaceName?: string;
  /**
   * A read-only credential (a key or OAuth grant made read-only): `engine.invoke` refuses every
   * call whose operation declares it writes (403 `forbidden`), and SQL runs read-only. Absent:
   * false.
   */
  readOnly?: boolean;
  /**
   * A `pa_` token (a key narrowed offline): its caveats live in the token, not in the key's row,
   * so it may not manage minted keys (a child would drop them). Absent: false.
   */
  attenuated?: boolean;
  /** Further allowlists that must each match too (MCP `tools=` narrowing a key). */
  narrowed?: readonly (readonly string[])[];
  /**
   * The key's operation budget (keys for agents): the limiter counts the key's metered
   * operations against it in the rate limit's own round trip. Absent: no budget.
   */
  budget?: KeyBudget;
  /**
   * A minted key's chain: the ids of the keys above it, its parent first. Named in the audit
   * entries of its calls (`detail.parents`), so an entry shows on whose behalf a sub-agent
   * acted. Absent for a key nobody minted.
   */
  parents?: readonly string[];
}

/**
 * What a key may spend, in operations as the plan counts them: a total for its whole life, or
 * a limit per UTC day or month that refills at the period's start.
 */
export type KeyBudget = { total: number } | { per: "day" | "month"; limit: number };

/**
 * A budget's text form, `1000` (a total) or `1000/day`, `1000/month` (the CLI's and the
 * dashboard's), or undefined when it is neither. The range is the server's to check.
 */
export function budgetOfText(text: string): KeyBudget | undefined {
  const match = /^\s*(\d+)\s*(?:\/\s*(day|month)\s*)?$/.exec(text);
  if (match === null) return undefined;
  const n = Number(match[1]);
  return match[2] === undefined ? { total: n } : { per: match[2] as "day" | "month", limit: n };
}

export const LOCAL_PRINCIPAL: Principal = {
  kind: "local",
  workspace: "local",
  actor: "local",
  groupId: null,
  tools: null,
};

export function isAccount(p: Principal): boolean {
  return p.kind === "account" || p.kind === "local";
}

/** Glob match for tool patterns: `*` matches any run of characters. */
export function toolPatternMatches(pattern: string, tool: string): boolean {
  if (!pattern.includes("*")) return pattern === tool;
  const re = new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`);
  return re.test(tool);
}

const matchesAny = (patterns: readonly string[], tool: string) =>
  patterns.some((pattern) => toolPatternMatches(pattern, tool));

export function toolAllowed(p: Principal, tool: string): boolean {
  if (p.tools !== null && !matchesAny(p.tools, tool)) return false;
  return (p.narrowed ?? []).every((patterns) => matchesAny(patterns, tool));
}

/** Narrows a principal to tools matching `patterns` as well as its own (MCP `tools=`). */
export function narrowTools(p: Principal, patterns: readonly string[]): Principal {
  return { ...p, narrowed: [...(p.narrowed ?? []), patterns] };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}
