import { router } from "./init";
import { PERMISSIONS } from "./permissions";
import { auditRouter } from "./routers/audit";
import { billingRouter } from "./routers/billing";
import { connectionsRouter } from "./routers/connections";
import { dataRouter } from "./routers/data";
import { keysRouter } from "./routers/keys";
import { invitationRouter, membersRouter } from "./routers/members";
import { primitiveRouter } from "./routers/primitive";
import { secretRequestRouter } from "./routers/secret-request";
import { usageRouter } from "./routers/usage";
import { webhooksRouter } from "./routers/webhooks";
import { settingsRouter, workspaceRouter } from "./routers/workspace";

export { PERMISSIONS };

/**
 * The dashboard's API: one router per area (routers/), composed here. The paths are the
 * client's (`members.list`, `keys.create`, …); every workspace procedure is a
 * `workspaceProcedure` (init.ts) whose roles PERMISSIONS names.
 */
export const appRouter = router({
  workspace: workspaceRouter,
  settings: settingsRouter,
  members: membersRouter,
  invitation: invitationRouter,
  keys: keysRouter,
  connections: connectionsRouter,
  usage: usageRouter,
  audit: auditRouter,
  data: dataRouter,
  primitive: primitiveRouter,
  secretRequest: secretRequestRouter,
  billing: billingRouter,
  webhooks: webhooksRouter,
});

export type AppRouter = typeof appRouter;
