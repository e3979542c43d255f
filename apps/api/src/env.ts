import { stripeEnv } from "@prim/billing";
import { cellEnv, cellEnvProblems } from "@prim/cells";
import { configurationError, controlPlaneEnv, portNumber, urlString } from "@prim/db";
import { z } from "zod";

/**
 * The api app's configuration, read from the environment once and validated (CLOUD.md,
 * Processes): a missing or malformed variable fails the start with a message naming it.
 * `process.env` is read nowhere else.
 */
const schema = z.object({
  ...controlPlaneEnv,
  ...stripeEnv,
  PRIM_API_PORT: portNumber.default(8787),
  /** The address the public listener binds: loopback unless set (`0.0.0.0` in a container). */
  PRIM_LISTEN_HOST: z.string().min(1).default("127.0.0.1"),
  PRIM_PUBLIC_API_URL: urlString("PRIM_PUBLIC_API_URL").optional(),
  /** The OAuth issuer (served under its path, `/oauth`), the MCP resource and the consent screen's host. */
  PRIM_AUTH_URL: urlString("PRIM_AUTH_URL").optional(),
  PRIM_PUBLIC_MCP_URL: urlString("PRIM_PUBLIC_MCP_URL").optional(),
  PRIM_MCP_PORT: portNumber.default(8788),
  PRIM_DASHBOARD_URL: urlString("PRIM_DASHBOARD_URL").optional(),
  PRIM_WEB_PORT: portNumber.default(3000),
  /** The internal listener (`POST /internal/invoke`, for apps/mcp); on loopback unless set. */
  PRIM_INTERNAL_PORT: portNumber.default(8789),
  PRIM_INTERNAL_HOST: z.string().min(1).default("127.0.0.1"),
  /** `off` runs without limits or metering (benchmarks' baseline); anything else is on. */
  PRIM_LIMITS: z.enum(["on", "off"]).default("on"),
  /** How long the limiter waits for Redis before it limits in process (ms, default 50). */
  PRIM_LIMITS_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).optional(),
  /** The header a trusted proxy sets to the client's address (signed URLs are limited per IP). */
  PRIM_CLIENT_IP_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "PRIM_CLIENT_IP_HEADER must be a header name")
    .optional(),
  /**
   * Webhook destinations on this machine (`allow`: http:// and loopback addresses; `npm run cloud`
   * and tests). Unset in production: https only, public addresses only.
   */
  PRIM_WEBHOOKS_LOOPBACK: z.enum(["allow"]).optional(),
  /** Outgoing mail (a disabled webhook tells the workspace's owners); unset: the log. */
  SMTP_URL: urlString("SMTP_URL").optional(),
  PRIM_MAIL_FROM: z.string().trim().min(3).default("Prim <no-reply@localhost>"),
  /** The cell's own: data directory, blobs, master key, id and address, ships, the cells' secret. */
  ...cellEnv,
});

export type ApiEnv = z.infer<typeof schema> & {
  publicApiUrl: string;
  /** The authorization server's issuer (`PRIM_AUTH_URL`, else the api's `/oauth`). */
  authUrl: string;
  /** The MCP resource tokens are issued for (`PRIM_PUBLIC_MCP_URL` + `/mcp`). */
  mcpResource: string;
  dashboardUrl: string;
};

const trimmed = (url: string) => url.replace(/\/+$/, "");

/** The configuration, or an Error whose message lists every bad variable, one per line. */
export function readApiEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  const parsed = schema.safeParse(source);
  // Checked apart from the schema, so it is reported together with the other problems.
  const extra = cellEnvProblems(source);
  if (!parsed.success || extra.length > 0) throw configurationError(parsed.error?.issues ?? [], extra);
  const env = parsed.data;
  const publicApiUrl = trimmed(env.PRIM_PUBLIC_API_URL ?? `http://localhost:${env.PRIM_API_PORT}`);
  return {
    ...env,
    publicApiUrl,
    authUrl: trimmed(env.PRIM_AUTH_URL ?? `${publicApiUrl}/oauth`),
    mcpResource: `${trimmed(env.PRIM_PUBLIC_MCP_URL ?? `http://localhost:${env.PRIM_MCP_PORT}`)}/mcp`,
    dashboardUrl: trimmed(env.PRIM_DASHBOARD_URL ?? `http://localhost:${env.PRIM_WEB_PORT}`),
  };
}
