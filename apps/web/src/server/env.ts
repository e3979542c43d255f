import { createHmac } from "node:crypto";
import { z } from "zod";

/**
 * The dashboard's configuration (CLOUD.md, Processes), read from the environment once, on first
 * use (never at build time), validated: a bad start names every bad variable.
 */
const port = z.coerce.number().int().min(0).max(65535);
const url = (name: string) => z.string().url(`${name} must be a URL`);

const schema = z.object({
  DATABASE_URL: z.string().min(1).default("postgres://postgres@localhost:5432/prim"),
  REDIS_URL: z.string().min(1).default("redis://localhost:6379"),
  PRIM_WEB_PORT: port.default(3000),
  PRIM_API_PORT: port.default(8787),
  PRIM_MCP_PORT: port.default(8788),
  PRIM_DASHBOARD_URL: url("PRIM_DASHBOARD_URL").optional(),
  PRIM_AUTH_URL: url("PRIM_AUTH_URL").optional(),
  /** The cell's internal listener: the dashboard reaches data through it (CLOUD.md, Invoker). */
  PRIM_INTERNAL_URL: url("PRIM_INTERNAL_URL").default("http://127.0.0.1:8789"),
  /** The REST API's public origin: signed URLs point there. */
  PRIM_PUBLIC_API_URL: url("PRIM_PUBLIC_API_URL").optional(),
  /** apps/mcp's public origin: the Connect dialog's MCP URL is it + `/mcp` (the OAuth resource). */
  PRIM_PUBLIC_MCP_URL: url("PRIM_PUBLIC_MCP_URL").optional(),
  PRIM_INTERNAL_SECRET: z
    .string({ error: "PRIM_INTERNAL_SECRET is required" })
    .min(32, "PRIM_INTERNAL_SECRET must be at least 32 characters"),
  /** Stripe (CLOUD.md, "Billing"): without a secret key the billing page says billing is off. */
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  /** A Stripe stand-in's address (tests and local development). */
  STRIPE_API_URL: url("STRIPE_API_URL").optional(),
  /** Sign-in attempts per address per minute (on in production; tests may raise it). */
  PRIM_SIGN_IN_PER_MINUTE: z.coerce.number().int().positive().default(10),
  /** Failed sign-ins per account (email) in a window, counted in Redis across processes. */
  PRIM_SIGN_IN_FAILURES_PER_ACCOUNT: z.coerce.number().int().positive().default(10),
  PRIM_SIGN_IN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().positive().default(900),
  /** The one header a trusted proxy sets to the client's address (as apps/api); else the socket's. */
  PRIM_CLIENT_IP_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "PRIM_CLIENT_IP_HEADER must be a header name")
    .optional(),
  /** Outgoing mail (nodemailer's URL form); unset, each message is written to the log instead. */
  SMTP_URL: url("SMTP_URL").optional(),
  PRIM_MAIL_FROM: z.string().trim().min(3).default("Prim <no-reply@localhost>"),
  /** A local mail capture's viewer (`npm run cloud` without SMTP_URL): the development mail page. */
  PRIM_MAIL_CAPTURE_URL: url("PRIM_MAIL_CAPTURE_URL").optional(),
});

export type WebEnv = z.infer<typeof schema> & {
  dashboardUrl: string;
  apiUrl: string;
  /** The MCP endpoint clients connect to (`PRIM_PUBLIC_MCP_URL` + `/mcp`, as apps/mcp and apps/api say). */
  mcpUrl: string;
  authUrl: string;
  /** The session library's secret, derived from the shared secret. */
  authSecret: string;
  /**
   * Development: a mail capture is configured and the dashboard itself is on loopback. Only
   * then is `/dev/mail` served (it shows every captured link, so never on a public address).
   */
  devMailPage: boolean;
};

/** localhost, 127.0.0.0/8 or [::1]. */
function isLoopback(origin: string): boolean {
  const host = new URL(origin).hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

let cached: WebEnv | undefined;

export function webEnv(source: NodeJS.ProcessEnv = process.env): WebEnv {
  if (cached !== undefined && source === process.env) return cached;
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`configuration:\n${lines.join("\n")}`);
  }
  const env = parsed.data;
  const trimmed = (url: string) => url.replace(/\/+$/, "");
  const dashboardUrl = trimmed(env.PRIM_DASHBOARD_URL ?? `http://localhost:${env.PRIM_WEB_PORT}`);
  const out: WebEnv = {
    ...env,
    dashboardUrl,
    authUrl: trimmed(env.PRIM_AUTH_URL ?? `http://localhost:${env.PRIM_API_PORT}/oauth`),
    apiUrl: trimmed(env.PRIM_PUBLIC_API_URL ?? `http://localhost:${env.PRIM_API_PORT}`),
    mcpUrl: `${trimmed(env.PRIM_PUBLIC_MCP_URL ?? `http://localhost:${env.PRIM_MCP_PORT}`)}/mcp`,
    authSecret: createHmac("sha256", env.PRIM_INTERNAL_SECRET).update("prim dashboard sessions v1").digest("hex"),
    devMailPage: env.PRIM_MAIL_CAPTURE_URL !== undefined && isLoopback(dashboardUrl),
  };
  if (source === process.env) cached = out;
  return out;
}
