import {
  checkWebhookUrl,
  createWebhook,
  deleteWebhook,
  enableWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  readPlan,
  redeliver,
  type WebhookInfo,
} from "@prim/db";
import { type AnyOperation, invalid, isAccount, type Limiter, type Principal, ServiceError } from "@prim/engine";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type pg from "pg";
import { z } from "zod";
import type { ChangeFeed } from "./feed.js";

/**
 * Webhook endpoints over REST (issue 42, item 3; docs/cloud.md, "Change feeds and webhooks"):
 * account keys only (a scoped, read-only or OAuth credential: 403), on Pro and Enterprise
 * (Starter: 403 `plan_limit`, as its other Pro features). The delivery itself is the
 * dispatcher's (dispatcher.ts).
 */

const FilterBody = z
  .object({
    types: z.array(z.string()).max(7).optional(),
    ops: z.array(z.string().min(1).max(32)).max(20).optional(),
    prefix: z.string().max(512).optional(),
  })
  .strict();

const CreateBody = z
  .object({
    url: z.string(),
    group: z.string().min(1).max(128).optional(),
    primitive: z.string().min(1).max(128).optional(),
    filter: FilterBody.optional(),
    description: z.string().max(200).optional(),
  })
  .strict();

const ID_RE = /^whk_[0-9a-z]{26}$/;
const DELIVERY_RE = /^whd_[0-9a-z]{26}$/;

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw invalid(`body: ${issue === undefined ? "invalid" : `${issue.path.join(".") || "body"}: ${issue.message}`}`);
}

export interface WebhookRoutesDeps {
  pool: pg.Pool;
  masterKey: Buffer;
  feed: ChangeFeed;
  /** http:// URLs too (tests and development; production: https only). */
  allowHttp: boolean;
  /** With limits on: Pro only, and rate-limited per key (counted as no operation). */
  limiter?: Limiter;
  rateAs?: AnyOperation;
}

/** With limits on, Pro and Enterprise only (Starter: 403 `plan_limit`, as its other Pro features). */
export async function requirePro(deps: Pick<WebhookRoutesDeps, "pool" | "limiter">, workspace: string): Promise<void> {
  if (deps.limiter !== undefined && (await readPlan(deps.pool, workspace)).plan === "starter") {
    throw new ServiceError("plan_limit", "webhooks need the Pro plan (Starter has the change feeds)");
  }
}

/**
 * Creates an endpoint for an admitted account-level `principal` (its workspace's, its actor
 * audited) from `POST /v1/webhooks`'s body: the one path of the REST route and of the
 * dashboard's (`POST /internal/webhooks`, internal.ts). The feed's head is read as the caller,
 * so only changes after this moment go out; the secret is sealed with this cell's master key.
 */
export async function createEndpoint(
  deps: Pick<WebhookRoutesDeps, "pool" | "masterKey" | "feed" | "allowHttp">,
  principal: Principal,
  raw: unknown,
): Promise<WebhookInfo & { secret: string }> {
  const body = parse(CreateBody, raw);
  if ((body.group === undefined) === (body.primitive === undefined)) {
    throw invalid("body: give one of group (a group's changes) and primitive (one primitive's)");
  }
  const url = checkWebhookUrl(body.url, deps.allowHttp);
  const cursor = await deps.feed.head(principal, { group: body.group, primitive: body.primitive });
  return createWebhook(deps.pool, deps.masterKey, {
    workspace: principal.workspace,
    group: body.group,
    primitive: body.primitive,
    url,
    filter: body.filter,
    description: body.description,
    cursor,
    actor: principal.actor,
  });
}

export function mountWebhooks(app: FastifyInstance, deps: WebhookRoutesDeps): void {
  const admit = async (req: FastifyRequest, reply: FastifyReply, writes: boolean): Promise<string> => {
    const { principal } = req;
    if (!isAccount(principal) || !principal.actor.startsWith("key:")) {
      throw new ServiceError("forbidden", "webhooks are managed with a workspace key");
    }
    if (writes && principal.readOnly === true) throw new ServiceError("forbidden", "this key is read-only");
    if (deps.limiter !== undefined && deps.rateAs !== undefined) {
      const headers = await deps.limiter.admit({ principal, op: deps.rateAs, target: null, input: {} });
      if (headers !== undefined) reply.headers(headers);
    }
    await requirePro(deps, principal.workspace);
    return principal.workspace;
  };
  const idOf = (id: string) => {
    if (!ID_RE.test(id)) throw new ServiceError("not_found", `webhook '${id.slice(0, 64)}'`);
    return id;
  };

  app.post("/v1/webhooks", async (req, reply) => {
    await admit(req, reply, true);
    const made = await createEndpoint(deps, req.principal, req.body);
    reply.code(201);
    return made;
  });

  app.get("/v1/webhooks", async (req, reply) => ({
    data: await listWebhooks(deps.pool, await admit(req, reply, false)),
  }));

  app.get<{ Params: { id: string } }>("/v1/webhooks/:id", async (req, reply) =>
    getWebhook(deps.pool, await admit(req, reply, false), idOf(req.params.id)),
  );

  app.delete<{ Params: { id: string } }>("/v1/webhooks/:id", async (req, reply) => {
    await deleteWebhook(deps.pool, await admit(req, reply, true), idOf(req.params.id), req.principal.actor);
    reply.code(204);
  });

  app.post<{ Params: { id: string } }>("/v1/webhooks/:id/enable", async (req, reply) =>
    enableWebhook(deps.pool, await admit(req, reply, true), idOf(req.params.id), req.principal.actor),
  );

  app.get<{ Params: { id: string }; Querystring: { limit?: string; before?: string } }>(
    "/v1/webhooks/:id/deliveries",
    async (req, reply) => {
      const ws = await admit(req, reply, false);
      const limit = req.query.limit === undefined ? 50 : Number(req.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw invalid("limit: a whole number from 1 to 200");
      const before = req.query.before;
      if (before !== undefined && !DELIVERY_RE.test(before)) throw invalid("before: a delivery id");
      return { data: await listDeliveries(deps.pool, ws, idOf(req.params.id), { limit, before }) };
    },
  );

  app.post<{ Params: { id: string; delivery: string } }>(
    "/v1/webhooks/:id/deliveries/:delivery/redeliver",
    async (req, reply) => {
      const ws = await admit(req, reply, true);
      const delivery = req.params.delivery;
      if (!DELIVERY_RE.test(delivery)) throw new ServiceError("not_found", `delivery '${delivery.slice(0, 64)}'`);
      await redeliver(deps.pool, ws, idOf(req.params.id), delivery, req.principal.actor, Date.now());
      reply.code(202);
      return { queued: true };
    },
  );
}
