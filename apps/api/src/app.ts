import {
  blobStores,
  CellService,
  masterKeyOf,
  openCell,
  PlacementCache,
  PlacementRouter,
  WorkspaceEngines,
} from "@prim/cells";
import { ApiKeyResolver, CatalogHub, KeyManagement, PLAN_CHANGED_PREFIX, RedisChanges, Revocations } from "@prim/db";
import {
  type Cell,
  type Clock,
  invalid,
  OPERATIONS,
  type Principal,
  SIGNED_URL_PRINCIPAL,
  UrlSigner,
} from "@prim/engine";
import { clientIpOf, createInternalServer, createServer, requestPath } from "@prim/http";
import { bearerToken, KEY_MANAGEMENT_RATE_AS } from "@prim/wire";
import type { FastifyInstance } from "fastify";
import type pg from "pg";
import { type ApiBilling, type BillingOptions, mountBilling, WEBHOOK_PATH } from "./billing.js";
import type { ApiEnv } from "./env.js";
import { mountKeys } from "./keys.js";
import { RedisLimiter, type RedisLimiterOptions } from "./limits/limiter.js";
import { Metering } from "./limits/metering.js";
import { mountOAuth } from "./oauth/mount.js";
import { type AuthServerOptions, createAuthProvider } from "./oauth/provider.js";
import { startWebhooks, type WebhookDispatcher } from "./webhooks/index.js";

const SIGNED_PREFIX = "/v1/signed/";

/**
 * A signed URL's caller: routed to the engine of the workspace its token names, which verifies
 * the signature (a forged workspace breaks it: 403). A token that is not a token is 400 in the
 * cloud (spec, Errors).
 */
function signedUrlPrincipal(path: string): Principal {
  const workspace = UrlSigner.peekWorkspace(path.slice(SIGNED_PREFIX.length));
  if (workspace === null) throw invalid("malformed signed-URL token");
  return { ...SIGNED_URL_PRINCIPAL, workspace };
}

/** Paths that carry no Bearer credential: health and the API's own description. */
const OPEN_PATHS = new Set(["/health", "/v1/openapi.json"]);

/** Who calls an open path: nobody in particular (no operation accepts it). */
const ANONYMOUS: Principal = { kind: "scoped", workspace: "", actor: "anonymous", groupId: null, tools: [] };

export interface ApiApp {
  app: FastifyInstance;
  hub: CatalogHub;
  tenants: WorkspaceEngines;
  /** This cell's door to data: its engines, or the cell a workspace is placed on. */
  invoker: PlacementRouter;
  /** Moves, ships and rebuilds (@prim/cells). */
  cellService: CellService;
  resolver: ApiKeyResolver;
  /** Limits and metering (absent with PRIM_LIMITS=off). */
  limiter: RedisLimiter | undefined;
  metering: Metering | undefined;
  /** Stripe billing (with `STRIPE_SECRET_KEY`): its client and the overage job. */
  billing: ApiBilling | undefined;
  revocations: Revocations;
  /** The internal listener's app (`POST /internal/invoke`), when PRIM_INTERNAL_SECRET is set. */
  internal: FastifyInstance | undefined;
  /** The webhook dispatcher of this cell's workspaces. */
  webhooks: WebhookDispatcher;
  close(): Promise<void>;
}

/**
 * The api app (a cell): REST `/v1` for `pk_` keys over an engine per workspace. Postgres holds
 * the catalog and the keys, Redis fans revocations out; the cell's files live in
 * `PRIM_DATA_DIR/<workspace id>/`.
 */
export interface ApiAppOptions {
  logger?: boolean;
  /** The engines' time (tests move a ManualClock); the system clock by default. */
  clock?: Clock;
  /** The limiter's options (tests: a moved clock, a short timeout). */
  limits?: RedisLimiterOptions;
  /** How the authorization server fetches Client ID Metadata Documents (tests serve their own). */
  oauthFetch?: AuthServerOptions["fetch"];
  /** The billing job's timing (tests run it by hand with `intervalMs: 0`). */
  billing?: BillingOptions;
  /** The webhook dispatcher's rounds (tests run them by hand with `intervalMs: 0`). */
  webhooks?: { intervalMs?: number };
}

export async function createApiApp(env: ApiEnv, options: ApiAppOptions = {}): Promise<ApiApp> {
  // With limits on, Starter's count caps are taken in the create's own transaction.
  const hub = await CatalogHub.open(env.DATABASE_URL, { planCaps: env.PRIM_LIMITS === "on" });
  const revocations = new Revocations(env.REDIS_URL);
  // Change notices of the cell's writes go to Redis: apps/mcp's resource subscriptions hear them.
  const changes = new RedisChanges(env.REDIS_URL);
  let cell: Cell | undefined;
  let limiter: RedisLimiter | undefined;
  try {
    cell = openCell(env, options.clock, changes);
    const pool = hub.pool as pg.Pool;
    const limits = { timeoutMs: env.PRIM_LIMITS_TIMEOUT_MS, ...options.limits };
    limiter = env.PRIM_LIMITS === "on" ? new RedisLimiter(env.REDIS_URL, pool, limits) : undefined;
    const tenants = new WorkspaceEngines(cell, hub, { blobsFor: blobStores(env), limiter });
    const placements = new PlacementCache(pool, { hub });
    const invoker = new PlacementRouter({
      placements,
      secret: env.PRIM_INTERNAL_SECRET,
      cell: { id: env.PRIM_CELL_ID, engines: tenants },
    });
    const cellService = new CellService(env.PRIM_CELL_ID, env, cell, tenants, hub, placements);
    await cellService.register(null);
    const metering =
      limiter === undefined ? undefined : new Metering(limiter, tenants, pool, { now: options.limits?.now });
    metering?.start();
    const resolver = new ApiKeyResolver(pool);
    await revocations.listen((message) => {
      // A plan change: the limiter's plan and leases of that workspace go at once.
      if (message.startsWith(PLAN_CHANGED_PREFIX)) limiter?.planChanged(message.slice(PLAN_CHANGED_PREFIX.length));
      else resolver.forget(message);
    });
    const operations = new Map(OPERATIONS.map((op) => [op.name, op]));
    // The authorization server (with PRIM_INTERNAL_SECRET: its consent results are signed with
    // it) authenticates its own way: its paths carry no Bearer credential.
    const oauthPrefix = new URL(env.authUrl).pathname.replace(/\/+$/, "");
    const oauth = env.PRIM_INTERNAL_SECRET !== undefined && oauthPrefix !== "";
    const isOAuthPath = (path: string) =>
      oauth && (path.startsWith(`${oauthPrefix}/`) || path === `/.well-known/oauth-authorization-server${oauthPrefix}`);
    const billingHooks = env.STRIPE_SECRET_KEY !== undefined && env.STRIPE_WEBHOOK_SECRET !== undefined;
    const app = createServer({
      invoker,
      // A request for a workspace another cell serves goes there whole; the placement is
      // resolved here once for the request's invoke as well.
      divert: (req, reply) => invoker.divert(req, reply),
      operation: (name) => operations.get(name),
      logger: options.logger,
      // Presigned URLs and the OpenAPI server: the configured public URL; on a port picked at
      // random (0, tests) without one, the origin each request came to.
      publicUrl: env.PRIM_API_PORT === 0 ? env.PRIM_PUBLIC_API_URL : env.publicApiUrl,
      clientIpHeader: env.PRIM_CLIENT_IP_HEADER,
      authenticate: (req) => {
        const path = requestPath(req.url);
        if (OPEN_PATHS.has(path) || isOAuthPath(path) || (billingHooks && path === WEBHOOK_PATH)) return ANONYMOUS;
        if (path.startsWith(SIGNED_PREFIX)) return signedUrlPrincipal(path);
        // The trusted client address: a key's IP allowlist and a pa_ token's `ip` caveat are checked against it.
        return resolver.resolve(bearerToken(req.headers.authorization), { clientIp: clientIpOf(req) });
      },
    });
    let stopOAuth = () => {};
    if (oauth && env.PRIM_INTERNAL_SECRET !== undefined) {
      const provider = await createAuthProvider({
        issuer: env.authUrl,
        resource: env.mcpResource,
        secret: env.PRIM_INTERNAL_SECRET,
        pool,
        masterKey: masterKeyOf(env),
        publish: (message) => revocations.publish(message),
        fetch: options.oauthFetch,
      });
      stopOAuth = mountOAuth(app, {
        provider,
        prefix: oauthPrefix,
        resource: env.mcpResource,
        dashboardUrl: env.dashboardUrl,
        secret: env.PRIM_INTERNAL_SECRET,
        pool,
      });
    }
    mountKeys(app, {
      keys: new KeyManagement({ pool, revocations, resolver, budgets: limiter?.budgets }),
      limiter,
      rateAs: operations.get(KEY_MANAGEMENT_RATE_AS),
    });
    const internal =
      env.PRIM_INTERNAL_SECRET === undefined
        ? undefined
        : createInternalServer({
            invoker,
            secret: env.PRIM_INTERNAL_SECRET,
            logger: options.logger,
            forward: (req, res) => app.routing(req, res),
          });
    if (internal !== undefined) cellService.mount(internal);
    const webhooks = startWebhooks(app, env, {
      internal,
      pool,
      tenants,
      invoker,
      limiter,
      operations,
      clock: options.clock,
      intervalMs: options.webhooks?.intervalMs,
    });
    const billing = mountBilling(app, env, { pool, revocations }, options.billing);
    const opened = cell;
    cellService.startShipping();
    return {
      app,
      hub,
      tenants,
      invoker,
      cellService,
      resolver,
      limiter,
      metering,
      revocations,
      internal,
      billing,
      webhooks,
      close: async () => {
        stopOAuth();
        await webhooks.stop();
        await billing?.stop();
        await app.close();
        await internal?.close();
        await cellService.stop();
        placements.close();
        metering?.stop();
        await tenants.close();
        await limiter?.close();
        await opened.close();
        await changes.close();
        await revocations.close();
        await hub.close();
      },
    };
  } catch (err) {
    await limiter?.close();
    await cell?.close();
    await changes.close();
    await revocations.close();
    await hub.close();
    throw err;
  }
}
