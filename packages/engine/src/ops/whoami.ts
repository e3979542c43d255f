import type { WhoAmI } from "@prim/wire";
import { z } from "zod";
import { untargetedOp } from "../primitives/operation.js";

/**
 * `GET /v1/whoami`: the credential's workspace and scope (what `prim login` and `prim whoami`
 * show). Any valid credential may ask; it reveals nothing the caller could not already use.
 */
export const whoAmI = untargetedOp({
  name: "auth.whoami",
  access: "read",
  audited: false,
  metered: false,
  writesStorage: false,
  input: z.strictObject({}),
  async run(ctx): Promise<WhoAmI> {
    const { principal, services } = ctx;
    const group = principal.groupId === null ? null : await services.catalog.getGroup(principal.groupId);
    // A further allowlist (an attenuated token's tools caveat, MCP `tools=`) makes it scoped too.
    const everything = principal.groupId === null && principal.tools === null && principal.narrowed === undefined;
    return {
      workspace: principal.workspace,
      workspace_name: principal.workspaceName ?? null,
      actor: principal.actor,
      kind: principal.kind === "local" ? "local" : everything ? "workspace" : "scoped",
      group: group === null ? null : { id: group.id, name: group.name },
      tools: principal.tools === null ? null : [...principal.tools],
      read_only: principal.readOnly === true,
    };
  },
});
