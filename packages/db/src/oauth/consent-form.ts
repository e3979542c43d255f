import { invalid, toolPatternMatches } from "@prim/engine";
import { checkTools } from "../control/keys.js";
import type { ConsentDecision } from "./consent.js";

/** The consent form's "every tool" field and value (CLOUD.md, "Dashboard routes"). */
export const EVERY_TOOL_FIELD = "every_tool";
export const EVERY_TOOL_VALUE = "yes";

/** The consent form's optional "Read-only" field: any of these values ticks it (a checkbox sends "on"). */
export const READ_ONLY_FIELD = "read_only";
const READ_ONLY_VALUES = new Set(["on", "yes", "true", "1"]);

/** What the "every tool" choice grants: every tool, including tools added later. */
const EVERY_TOOL = "*";

/** A submitted form: FormData (the dashboard) or URLSearchParams (tests' stand-in). */
interface SubmittedForm {
  get(name: string): unknown;
  getAll(name: string): unknown[];
}

/**
 * The decision a consent form POST carries: `action=allow|deny`, `workspace` (id), `group`
 * (name), `tools` (repeated: names or patterns), `every_tool=yes` (the screen's own choice),
 * optional `read_only` (a checkbox: `on`, or `yes`/`true`/`1`).
 */
export function consentDecisionFromForm(uid: string, user: string, form: SubmittedForm): ConsentDecision {
  if (form.get("action") !== "allow") return { action: "deny", uid, user };
  return {
    action: "allow",
    uid,
    user,
    workspace: String(form.get("workspace") ?? ""),
    group: String(form.get("group") ?? ""),
    tools: form.getAll("tools").map(String),
    everyTool: form.get(EVERY_TOOL_FIELD) === EVERY_TOOL_VALUE,
    readOnly: READ_ONLY_VALUES.has(String(form.get(READ_ONLY_FIELD) ?? "")),
  };
}

/**
 * The tools an allow grants, checked against the tool catalog (every MCP tool's name): each
 * listed name or pattern must match at least one tool, and not all of them — a pattern that
 * stands for every tool (`*`, `*_*`) is the "every tool" choice's alone, so that granting
 * tools yet to come is always a deliberate choice on the screen. That choice grants `*`.
 * Else 400 `invalid_request` naming the entry.
 */
export function consentTools(tools: readonly string[], everyTool: boolean, catalog: readonly string[]): string[] {
  if (tools.length === 0 && !everyTool) throw invalid("tools: choose at least one tool, or every tool");
  checkTools(tools);
  for (const tool of tools) {
    const matched = catalog.filter((name) => toolPatternMatches(tool, name)).length;
    if (matched === 0) throw invalid(`tools: '${tool}' matches no tool`);
    if (matched === catalog.length) {
      throw invalid(`tools: '${tool}' stands for every tool; choose "Every tool" on the screen for that`);
    }
  }
  return everyTool ? [EVERY_TOOL] : [...tools];
}
