// The consent form's fields as a decision (CLOUD.md, "Dashboard routes"): the optional
// `read_only` checkbox (issue 40, item 3) is read as the browser posts it; a denial carries none.
import { consentDecisionFromForm, READ_ONLY_FIELD } from "@prim/db";
import { describe, expect, it } from "vitest";

const form = (fields: [string, string][]) => new URLSearchParams(fields);
const allow: [string, string][] = [
  ["action", "allow"],
  ["workspace", "ws_1"],
  ["group", "app"],
  ["tools", "kv_get"],
  ["tools", "kv_set"],
];

describe("the consent form's read_only field", () => {
  it("is ticked by a checkbox's `on` (and yes/true/1), unticked when absent or anything else", () => {
    const readOnly = (value?: string) =>
      (
        consentDecisionFromForm(
          "uid",
          "u1",
          form(value === undefined ? allow : [...allow, [READ_ONLY_FIELD, value]]),
        ) as {
          readOnly?: boolean;
        }
      ).readOnly;
    expect(["on", "yes", "true", "1"].map(readOnly)).toEqual([true, true, true, true]);
    expect([undefined, "", "off", "no", "false"].map(readOnly)).toEqual([false, false, false, false, false]);
  });

  it("rides with the rest of an allow; a denial is only a denial", () => {
    expect(consentDecisionFromForm("uid", "u1", form([...allow, ["read_only", "on"]]))).toEqual({
      action: "allow",
      uid: "uid",
      user: "u1",
      workspace: "ws_1",
      group: "app",
      tools: ["kv_get", "kv_set"],
      everyTool: false,
      readOnly: true,
    });
    expect(
      consentDecisionFromForm(
        "uid",
        "u1",
        form([
          ["action", "deny"],
          ["read_only", "on"],
        ]),
      ),
    ).toEqual({
      action: "deny",
      uid: "uid",
      user: "u1",
    });
  });
});
