import type { PlacementRouter, WorkspaceEngines } from "@prim/cells";
import { masterKeyOf } from "@prim/cells";
import type { AnyOperation, Clock } from "@prim/engine";
import { createMailer } from "@prim/mail";
import type { FastifyInstance } from "fastify";
import type pg from "pg";
import type { ApiEnv } from "../env.js";
import type { RedisLimiter } from "../limits/limiter.js";
import { WebhookDispatcher } from "./dispatcher.js";
import { EngineFeed } from "./feed.js";
import { mountInternalWebhooks } from "./internal.js";
import { mountWebhooks, type WebhookRoutesDeps } from "./routes.js";

export { WebhookDispatcher } from "./dispatcher.js";

export interface WebhookDeps {
  pool: pg.Pool;
  tenants: WorkspaceEngines;
  invoker: PlacementRouter;
  limiter: RedisLimiter | undefined;
  operations: Map<string, AnyOperation>;
  clock?: Clock;
  /** The cell's internal listener (with PRIM_INTERNAL_SECRET): the dashboard creates endpoints there. */
  internal?: FastifyInstance;
  /** ms between the dispatcher's rounds (default 250); 0: none run by themselves (tests call `tick`). */
  intervalMs?: number;
}

/**
 * Webhooks in a cell (issue 42, item 3): the REST routes, the dashboard's create on the
 * internal listener, and the dispatcher of the endpoints
 * of the workspaces placed here. A disabled endpoint's owners are mailed over `SMTP_URL` (else
 * the message goes to the log).
 */
export function startWebhooks(app: FastifyInstance, env: ApiEnv, deps: WebhookDeps): WebhookDispatcher {
  const masterKey = masterKeyOf(env);
  const loopback = env.PRIM_WEBHOOKS_LOOPBACK === "allow";
  const feed = new EngineFeed(deps.tenants, deps.invoker);
  const routes: WebhookRoutesDeps = {
    pool: deps.pool,
    masterKey,
    feed,
    allowHttp: loopback,
    limiter: deps.limiter,
    rateAs: deps.operations.get("auth.whoami"),
  };
  mountWebhooks(app, routes);
  if (deps.internal !== undefined) mountInternalWebhooks(deps.internal, routes);
  const mailer = env.SMTP_URL === undefined ? null : createMailer({ url: env.SMTP_URL, from: env.PRIM_MAIL_FROM });
  const dispatcher = new WebhookDispatcher(deps.pool, feed, {
    masterKey,
    cell: env.PRIM_CELL_ID,
    intervalMs: deps.intervalMs,
    now: deps.clock === undefined ? undefined : () => (deps.clock as Clock).now(),
    allowLoopback: loopback,
    mail: async (to, subject, text) => {
      if (mailer === null) console.log(`prim api: SMTP_URL unset; mail to ${to}: ${subject}\n${text}`);
      else await mailer.send({ to, subject, text });
    },
    count: deps.limiter === undefined ? undefined : (ws) => deps.limiter?.count(ws, 1),
    log: (line) => console.warn(line),
  });
  if (deps.intervalMs !== 0) dispatcher.start();
  const stop = dispatcher.stop.bind(dispatcher);
  dispatcher.stop = async () => {
    await stop();
    mailer?.close();
  };
  return dispatcher;
}
