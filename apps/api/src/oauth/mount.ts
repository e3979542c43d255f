import type { IncomingMessage, ServerResponse } from "node:http";
import { acceptConsent, checkConsent, purgeExpiredOAuth, recordConnection, savePendingAuthorization } from "@prim/db";
import { ServiceError, toServiceError } from "@prim/engine";
import { clientIpOf, requestPath } from "@prim/http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type Provider from "oidc-provider";
import type pg from "pg";
import { CLIENT_IP_HEADER, grantIdFor, MCP_SCOPE } from "./provider.js";

export interface OAuthMountOptions {
  provider: Provider;
  /** Where the server is mounted: the issuer's path (`/oauth`). */
  prefix: string;
  resource: string;
  dashboardUrl: string;
  secret: string;
  pool: pg.Pool;
}

const INTERACTION_RE = /^\/interaction\/([A-Za-z0-9_-]{1,64})(\/complete)?$/;

/**
 * The library builds its endpoints, the interaction's way back and its cookies' `secure` flag
 * from the request's host and protocol (the forwarded ones, as it trusts a proxy). Those are
 * the issuer's, whatever the caller or a proxy claims: `Host` and `X-Forwarded-Host/-Proto`
 * are overwritten with PRIM_AUTH_URL's, and the address is the one apps/api trusts
 * (`PRIM_CLIENT_IP_HEADER` only when configured, else the socket's).
 */
function pinToIssuer(req: FastifyRequest, issuer: URL): void {
  const headers = req.raw.headers;
  headers.host = issuer.host;
  headers["x-forwarded-host"] = issuer.host;
  headers["x-forwarded-proto"] = issuer.protocol.slice(0, -1);
  headers[CLIENT_IP_HEADER] = clientIpOf(req);
}

function sendError(res: ServerResponse, err: unknown): void {
  const error = toServiceError(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.statusCode = error.status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.end(JSON.stringify(error));
}

/**
 * The interaction routes of the challenge pattern (CLOUD.md, "OAuth for MCP"). The first keeps
 * the interaction cookie on this host and sends the browser to the dashboard's consent screen;
 * the dashboard sends it back to `/complete` with a signed result, bound to this interaction
 * and the user, used once. A valid allow creates the grant (the MCP resource with its one
 * scope), records the connection (grant, client, user, workspace, group, tools) and finishes
 * the interaction; a deny finishes it with `access_denied`.
 */
async function interaction(
  options: OAuthMountOptions,
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
  complete: boolean,
): Promise<void> {
  const { provider } = options;
  // Checks the interaction cookie: another browser (or a finished interaction) is refused here.
  let details: Awaited<ReturnType<Provider["interactionDetails"]>>;
  try {
    details = await provider.interactionDetails(req, res);
  } catch {
    throw new ServiceError("invalid_request", "no such interaction in this browser (expired or already finished)");
  }
  if (details.uid !== uid) throw new ServiceError("invalid_request", "interaction mismatch");
  const clientId = String(details.params.client_id);
  if (!complete) {
    const client = await provider.Client.find(clientId);
    await savePendingAuthorization(options.pool, {
      uid,
      client_id: clientId,
      client_name: client?.clientName ?? null,
      redirect_uri: String(details.params.redirect_uri ?? ""),
      resource: typeof details.params.resource === "string" ? details.params.resource : null,
      expires_at: details.exp * 1000,
    });
    res.statusCode = 303;
    res.setHeader("location", `${options.dashboardUrl}/oauth/consent/${uid}`);
    res.end();
    return;
  }
  const url = new URL(req.url ?? "/", "http://x");
  const token = url.searchParams.get("result");
  if (token === null) throw new ServiceError("invalid_request", "result: required");
  const result = await acceptConsent(options.pool, options.secret, token, uid);
  if (result.action === "deny") {
    await provider.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: "the user denied access" },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  try {
    // Again here: the membership or the group may have gone since the dashboard signed.
    await checkConsent(options.pool, result);
  } catch (err) {
    const reason = toServiceError(err).message;
    await provider.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: reason },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  // Its id carries the workspace's tag, which its access tokens then carry (provider.ts).
  const grant = new provider.Grant({ accountId: result.user, clientId });
  grant.jti = grantIdFor(result.workspace);
  grant.addResourceScope(options.resource, MCP_SCOPE);
  const requested = String(details.params.scope ?? "").split(" ");
  const oidc = requested.filter((s) => s === "openid" || s === "offline_access" || s === MCP_SCOPE);
  if (oidc.length > 0) grant.addOIDCScope(oidc.join(" "));
  const grantId = await grant.save();
  const client = await provider.Client.find(clientId);
  await recordConnection(options.pool, {
    grantId,
    clientId,
    clientName: client?.clientName ?? null,
    user: result.user,
    workspace: result.workspace,
    groupId: result.group,
    tools: result.tools,
    readOnly: result.readOnly === true,
  });
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: result.user }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/**
 * Serves the authorization server under `prefix` and its RFC 8414 metadata at the path-inserted
 * well-known URL. oidc-provider is a Koa app: a request for it leaves Fastify in `onRequest`
 * (the reply hijacked, the raw request handed over with the prefix stripped), so Fastify never
 * parses its bodies.
 */
export function mountOAuth(app: FastifyInstance, options: OAuthMountOptions): () => void {
  const { prefix, provider } = options;
  const callback = provider.callback();
  const issuer = new URL(provider.issuer);
  const wellKnown = `/.well-known/oauth-authorization-server${prefix}`;
  app.addHook("onRequest", (req, reply, done) => {
    const path = requestPath(req.url);
    let inner: string;
    if (path === wellKnown) inner = `/.well-known/oauth-authorization-server${req.url.slice(path.length)}`;
    else if (path.startsWith(`${prefix}/`)) inner = req.url.slice(prefix.length);
    else return done();
    reply.hijack();
    pinToIssuer(req, issuer);
    const raw = req.raw;
    const match = INTERACTION_RE.exec(requestPath(inner));
    if (match !== null) {
      interaction(options, raw, reply.raw, match[1] as string, match[2] !== undefined).catch((err) =>
        sendError(reply.raw, err),
      );
      return;
    }
    // The library finds its mount path as originalUrl minus url (the path-inserted well-known
    // form is served as if asked under the prefix).
    (raw as IncomingMessage & { originalUrl?: string }).originalUrl = `${prefix}${inner}`;
    raw.url = inner;
    callback(raw, reply.raw);
  });
  // Expired codes, tokens and interactions go now and then.
  const timer = setInterval(() => void purgeExpiredOAuth(options.pool).catch(() => {}), 10 * 60_000);
  timer.unref();
  return () => clearInterval(timer);
}
