import { stripeEnv } from "@prim/billing";
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
  PRIM_BLOBS: z
    .string()
    .default("local:.prim-cloud/blobs")
    .refine((v) => v === "s3" || (v.startsWith("local:") && v.length > "local:".length), {
      message: "PRIM_BLOBS must be local:<dir> or s3",
    }),
  S3_ENDPOINT: urlString("S3_ENDPOINT").optional(),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default("us-east-1"),
  PRIM_DATA_DIR: z.string().min(1).default(".prim-cloud/data"),
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
  PRIM_INTERNAL_SECRET: z.string().min(32, "PRIM_INTERNAL_SECRET must be at least 32 characters").optional(),
  /** `off` runs without limits or metering (benchmarks' baseline); anything else is on. */
  PRIM_LIMITS: z.enum(["on", "off"]).default("on"),
  /** The header a trusted proxy sets to the client's address (signed URLs are limited per IP). */
  PRIM_CLIENT_IP_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "PRIM_CLIENT_IP_HEADER must be a header name")
    .optional(),
  /** This cell's id in `cells` (several cells: one each; CLOUD.md, "Scale-out"). */
  PRIM_CELL_ID: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "PRIM_CELL_ID must be 1-63 lowercase letters, digits and dashes")
    .default("local"),
  /** Where the other processes reach this cell's internal listener (default: the address it listens on). */
  PRIM_CELL_URL: urlString("PRIM_CELL_URL").optional(),
  /** Seconds between archives of each changed workspace shipped to the blob store (0: none). */
  PRIM_SHIP_INTERVAL_S: z.coerce.number().int().min(0).default(300),
  /**
   * When writes are acknowledged (CLOUD.md): `durable` (default) once fsynced to stable storage;
   * `fast` once committed (a power cut can lose the last acknowledged writes).
   */
  PRIM_DURABILITY: z.enum(["fast", "durable"]).default("durable"),
  PRIM_MASTER_KEY: z
    .string()
    .regex(/^[0-9a-f]{64}$/i, "PRIM_MASTER_KEY must be 64 hex characters (32 bytes)")
    .optional(),
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
  const extra =
    source.PRIM_BLOBS === "s3" && !source.S3_BUCKET ? ["  S3_BUCKET: S3_BUCKET is required when PRIM_BLOBS=s3"] : [];
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
