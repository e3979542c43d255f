import { PlacementCache, PlacementRouter } from "@prim/cells";
import {
  ApiKeyResolver,
  KeyBudgets,
  KeyManagement,
  OAuthTokenResolver,
  openPool,
  PLAN_CHANGED_PREFIX,
  RedisChanges,
  Revocations,
} from "@prim/db";
import { clientIpOf, createBaseServer, requestPath } from "@prim/http";
import { type KeyManager, type McpMountOptions, mountMcp } from "@prim/mcp";
import { bearerToken, type Invoker, invalid, KEY_MANAGEMENT_RATE_AS, type Principal, ServiceError } from "@prim/wire";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { McpEnv } from "./env.js";
import { OriginPolicy } from "./origin.js";

/** Who asks for an open path (health, the resource metadata): nobody; no operation accepts it. */
const ANONYMOUS: Principal = { kind: "scoped", workspace: "", actor: "anonymous", groupId: null, tools: [] };

export interface McpApp {
  app: FastifyInstance;
  resolver: ApiKeyResolver;
  tokens: OAuthTokenResolver;
  close(): Promise<void>;
}

/** RFC 9728 document: this resource and the authorization server that issues its tokens. */
export function resourceMetadata(env: McpEnv) {
  return {
    resource: `${env.publicMcpUrl}/mcp`,
    authorization_servers: [env.authUrl],
    bearer_methods_supported: ["header"],
    scopes_supported: ["mcp"],
    resource_name: "Prim MCP",
  };
}

/**
 * The group a request addresses (spec: "Group selection on MCP"): a one-group credential's own
 * group (a header naming another is refused by the lookup: 403 `group_mismatch`); a credential
 * for every group must name one in `X-Service-Group` (else 400 `invalid_request`).
 */
function selectGroup(req: FastifyRequest): string {
  const header = req.headers["x-service-group"];
  const named = typeof header === "string" && header.trim() !== "" ? header.trim() : undefined;
  const { groupId } = req.principal;
  if (groupId !== null) return named ?? groupId;
  if (named === undefined) {
    throw invalid("X-Service-Group: required with a credential for every group (name the group this session uses)");
  }
  return named;
}

/**
 * The key tools' manager (`key_mint`, `key_list`, `key_revoke`): `@prim/db`'s `KeyManagement`, as
 * apps/api's `/v1/keys` runs it, its revocations forgotten by this process's resolver at once and
 * published to every other. The rate limit is the cell's: one `KEY_MANAGEMENT_RATE_AS` call
 * through the invoker takes a token from the key's bucket there and counts no operation, as the
 * REST routes' limiter does.
 */
function keyManager(deps: ConstructorParameters<typeof KeyManagement>[0], invoker: Invoker): KeyManager {
  const keys = new KeyManagement(deps);
  const call = (principal: Principal) => ({
    principal,
    admit: () => invoker.invoke(principal, KEY_MANAGEMENT_RATE_AS, null, {}),
  });
  return {
    mint: (principal, request) => keys.mint(call(principal), request),
    list: (principal) => keys.list(call(principal)),
    revoke: (principal, id) => keys.revoke(call(principal), id),
  };
}

/**
 * apps/mcp (CLOUD.md, Processes): `POST/GET/DELETE /mcp` for `pk_` keys and `po_` OAuth tokens
 * (bound to this resource; a token behaves as a key scoped to its consented group and tools)
 * over the cell's internal invoke, and the protected-resource metadata.
 */
export async function createMcpApp(
  env: McpEnv,
  options: { logger?: boolean; sessions?: Omit<McpMountOptions, "url" | "groupOf"> } = {},
): Promise<McpApp> {
  const pool = await openPool(env.DATABASE_URL);
  const revocations = new Revocations(env.REDIS_URL);
  const resolver = new ApiKeyResolver(pool);
  const tokens = new OAuthTokenResolver(pool, `${env.publicMcpUrl}/mcp`);
  // The cells' change notices (Redis): resource subscriptions hear writes made on any cell.
  const changes = new RedisChanges(env.REDIS_URL);
  // A minted child's budget is carved out of its parent's in the limits' Redis, as apps/api does.
  const budgets = KeyBudgets.connect(env.REDIS_URL);
  try {
    await revocations.listen((message) => {
      if (message.startsWith("grant:")) tokens.forgetGrant(message.slice("grant:".length));
      else if (message.startsWith("token:")) tokens.forget(message.slice("token:".length));
      else if (message.startsWith(PLAN_CHANGED_PREFIX))
        return; // the cells' limiters' concern
      else resolver.forget(message);
    });
  } catch (err) {
    await revocations.close();
    await changes.close();
    await budgets.close();
    await pool.end();
    throw err;
  }
  // Each call straight to the cell its workspace is placed on (placements cached for 2 s: a
  // stale one costs a hop, that cell forwards); unknown, to PRIM_INTERNAL_URL's cell.
  const placements = new PlacementCache(pool);
  const invoker = new PlacementRouter({
    placements,
    secret: env.PRIM_INTERNAL_SECRET,
    fallbackUrl: env.PRIM_INTERNAL_URL,
  });
  const metadata = resourceMetadata(env);
  const challenge = (error?: string) =>
    `Bearer ${error === undefined ? "" : `error="${error}", `}resource_metadata="${env.publicMcpUrl}/.well-known/oauth-protected-resource/mcp"`;
  const unauthorized = (error: string | undefined, message: string) =>
    new ServiceError("invalid_token", message, { headers: { "WWW-Authenticate": challenge(error) } });

  const origins = new OriginPolicy([env.publicMcpUrl, ...env.PRIM_MCP_ALLOWED_ORIGINS]);

  const app = createBaseServer({
    logger: options.logger,
    publicUrl: env.publicMcpUrl,
    clientIpHeader: env.PRIM_CLIENT_IP_HEADER,
    authenticate: async (req) => {
      const path = requestPath(req.url);
      if (path === "/health" || path.startsWith("/.well-known/")) return ANONYMOUS;
      origins.check(req);
      if (req.method === "OPTIONS") return ANONYMOUS; // a CORS preflight carries no credential
      const token = bearerToken(req.headers.authorization);
      if (token === undefined)
        throw unauthorized(undefined, "this resource needs a Bearer token (an API key or an OAuth token)");
      try {
        return await (token.startsWith("po_")
          ? tokens.resolve(token)
          : resolver.resolve(token, { clientIp: clientIpOf(req) }));
      } catch (err) {
        if (err instanceof ServiceError && err.code === "invalid_token") {
          throw unauthorized("invalid_token", err.message);
        }
        throw err;
      }
    },
  });
  // Public documents: readable from any origin.
  const open = (_req: FastifyRequest, reply: FastifyReply) => {
    reply.header("Access-Control-Allow-Origin", "*");
    return metadata;
  };
  app.get("/.well-known/oauth-protected-resource/mcp", async (req, reply) => open(req, reply));
  app.get("/.well-known/oauth-protected-resource", async (req, reply) => open(req, reply));
  origins.install(app, "/mcp");
  mountMcp(app, invoker, {
    ...options.sessions,
    url: "/mcp",
    groupOf: selectGroup,
    changes,
    keys: keyManager({ pool, revocations, resolver, budgets }, invoker),
    // A person answers a secret request on the dashboard, signed in (apps/web: secret-requests).
    secretRequestUrl: ({ workspace, primitive, request }) =>
      `${env.dashboardUrl}/w/${encodeURIComponent(workspace)}/secret-requests/${primitive}/${request}`,
  });
  return {
    app,
    resolver,
    tokens,
    close: async () => {
      await app.close();
      await revocations.close();
      await changes.close();
      await budgets.close();
      await pool.end();
    },
  };
}
