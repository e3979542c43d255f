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
  /** Tool names by primitive type, and the always-allowed ones. */
  tools: { type: string; names: string[] }[];
}

/** Tool names of the allowlist (@prim/wire's catalog) grouped for the form (`primitive_list` is always allowed). */
function toolCatalog(): { type: string; names: string[] }[] {
  const byType = new Map<string, string[]>();
  for (const tool of TOOL_CATALOG as readonly ToolInfo[]) {
    if (tool.name === "primitive_list") continue;
    // Tools of no one type (primitive_create, …) go under `primitive` (pattern `primitive_*`).
    const type = tool.type ?? "primitive";
    byType.set(type, [...(byType.get(type) ?? []), tool.name]);
  }
  return [...byType].map(([type, names]) => ({ type, names: names.sort() }));
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
    tools: toolCatalog(),
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
