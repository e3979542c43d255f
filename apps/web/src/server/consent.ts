import type { PendingAuthorization } from "@prim/db";
import { TOOL_CATALOG, type ToolInfo } from "@prim/wire";
import { db } from "./db";
import { webEnv } from "./env";
import { primDb } from "./prim";

export interface ConsentChoices {
  pending: PendingAuthorization;
  /** Where the client will send the user back (its redirect URI's host), shown to the user. */
  redirectHost: string;
  workspaces: { id: string; name: string; role: string; groups: string[] }[];
  /** The tools by type, in the catalog's order (`primitive_list`, always allowed, apart). */
  sections: ToolSection[];
  /** How long the app's tokens last (seconds; apps/api's authorization server issues them so). */
  lifetimes: { accessToken: number; refreshToken: number };
}

/** One tool as the screen shows it. */
export interface ConsentTool {
  name: string;
  title: string;
  summary: string;
  access: "read" | "write";
}

/** The tools of one type: its select-all posts `<type>_*`. */
export interface ToolSection {
  type: string;
  label: string;
  tools: ConsentTool[];
}

/** The tool every grant includes (the server adds it; the screen says so instead of offering it). */
export const ALWAYS_ALLOWED = "primitive_list";

const TYPE_LABELS: Record<string, string> = {
  primitive: "Data stores",
  changes: "Change feeds",
  db: "SQL databases",
  fs: "Files",
  queue: "Queues",
  memory: "Memory",
  vault: "Vault (secrets)",
  kv: "Key-value",
  storage: "Object storage",
};

/** The allowlist (@prim/wire's catalog) grouped by type for the form, each tool with its access. */
export function toolSections(): ToolSection[] {
  const byType = new Map<string, ConsentTool[]>();
  for (const tool of TOOL_CATALOG as readonly ToolInfo[]) {
    if (tool.name === ALWAYS_ALLOWED) continue;
    // Tools of no one type go under their name's first word, the select-all's pattern:
    // `primitive` (primitive_create, …: `primitive_*`), `changes` (changes_read: `changes_*`).
    const type = tool.type ?? (tool.name.split("_")[0] as string);
    const { name, title, summary, access } = tool;
    byType.set(type, [...(byType.get(type) ?? []), { name, title, summary, access }]);
  }
  return [...byType].map(([type, tools]) => ({ type, label: TYPE_LABELS[type] ?? type, tools }));
}

/** What the consent screen offers `user` for authorization `uid` (its workspaces with a data role). */
export async function consentChoices(uid: string, user: string): Promise<ConsentChoices> {
  const prim = await primDb();
  const pending = await prim.describeAuthorization(db(), uid);
  const workspaces = await prim.consentWorkspaces(db(), user);
  let redirectHost = pending.redirect_uri;
  try {
    redirectHost = new URL(pending.redirect_uri).host;
  } catch {
    // shown as registered
  }
  return {
    pending,
    redirectHost,
    workspaces,
    sections: toolSections(),
    lifetimes: prim.OAUTH_LIFETIMES,
  };
}

/**
 * The form's POST (CLOUD.md, "Dashboard routes"): the decision checked and signed for the
 * authorization server, answered as where the browser goes next.
 */
export async function decideConsent(uid: string, user: string, form: FormData): Promise<string> {
  const prim = await primDb();
  const decision = prim.consentDecisionFromForm(uid, user, form);
  // Checked against every tool's name: a name or pattern matching none is refused.
  const catalog = TOOL_CATALOG.map((tool) => tool.name);
  const result = await prim.signConsent(db(), webEnv().PRIM_INTERNAL_SECRET, decision, { catalog });
  return `${webEnv().authUrl}/interaction/${encodeURIComponent(uid)}/complete?result=${encodeURIComponent(result)}`;
}
