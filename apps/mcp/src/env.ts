import { configurationError, controlPlaneEnv, portNumber, urlString } from "@prim/db";
import { z } from "zod";

/**
 * apps/mcp's configuration, read from the environment once and validated (CLOUD.md,
 * Processes): a missing or malformed variable fails the start with a message naming it.
 */
const schema = z.object({
  ...controlPlaneEnv,
  PRIM_MCP_PORT: portNumber.default(8788),
  /** The address the listener binds: loopback unless set (`0.0.0.0` in a container). */
  PRIM_LISTEN_HOST: z.string().min(1).default("127.0.0.1"),
  PRIM_PUBLIC_MCP_URL: urlString("PRIM_PUBLIC_MCP_URL").optional(),
  PRIM_AUTH_URL: urlString("PRIM_AUTH_URL").optional(),
  PRIM_API_PORT: portNumber.default(8787),
  /** The dashboard: where a person answers a secret request (`vault_request_secret`). */
  PRIM_DASHBOARD_URL: urlString("PRIM_DASHBOARD_URL").optional(),
  PRIM_WEB_PORT: portNumber.default(3000),
  /** The cell's internal listener (apps/api `PRIM_INTERNAL_PORT`). */
  PRIM_INTERNAL_URL: urlString("PRIM_INTERNAL_URL").default("http://127.0.0.1:8789"),
  /**
   * Browser origins allowed to call `/mcp` (comma-separated; `*` for any). Requests without an
   * `Origin` header (non-browser clients) are not affected. The app's own origin is always in.
   */
  PRIM_MCP_ALLOWED_ORIGINS: z
    .string()
    .default("")
    .transform((raw) =>
      raw
        .split(",")
        .map((o) => o.trim())
        .filter((o) => o !== ""),
    )
    .refine((list) => list.every((o) => o === "*" || URL.canParse(o)), {
      message: "PRIM_MCP_ALLOWED_ORIGINS must be a comma-separated list of origins (https://app.example.com) or *",
    }),
  /**
   * The header a trusted proxy sets to the client's address (as apps/api's): a key's IP
   * allowlist and a pa_ token's `ip` caveat are checked against it; unset, the socket's address.
   */
  PRIM_CLIENT_IP_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "PRIM_CLIENT_IP_HEADER must be a header name")
    .optional(),
  PRIM_INTERNAL_SECRET: z
    .string({ error: "PRIM_INTERNAL_SECRET is required" })
    .min(32, "PRIM_INTERNAL_SECRET must be at least 32 characters"),
});

export type McpEnv = z.infer<typeof schema> & {
  /** The public origin of this app (`PRIM_PUBLIC_MCP_URL`, else localhost and the port). */
  publicMcpUrl: string;
  /** The authorization server's issuer (`PRIM_AUTH_URL`, else the api's `/oauth`). */
  authUrl: string;
  /** The dashboard's origin (`PRIM_DASHBOARD_URL`, else localhost and the web port). */
  dashboardUrl: string;
};

export function readMcpEnv(source: NodeJS.ProcessEnv = process.env): McpEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw configurationError(parsed.error.issues);
  const env = parsed.data;
  return {
    ...env,
    publicMcpUrl: (env.PRIM_PUBLIC_MCP_URL ?? `http://localhost:${env.PRIM_MCP_PORT}`).replace(/\/+$/, ""),
    authUrl: (env.PRIM_AUTH_URL ?? `http://localhost:${env.PRIM_API_PORT}/oauth`).replace(/\/+$/, ""),
    dashboardUrl: (env.PRIM_DASHBOARD_URL ?? `http://localhost:${env.PRIM_WEB_PORT}`).replace(/\/+$/, ""),
  };
}
