import { z } from "zod";

/**
 * The api app's configuration, read from the environment once and validated (CLOUD.md,
 * Processes): a missing or malformed variable fails the start with a message naming it.
 * `process.env` is read nowhere else.
 */
const urlString = (name: string) => z.string().refine((v) => URL.canParse(v), { message: `${name} must be a URL` });

const PORT_MESSAGE = "must be a port number (0-65535)";
const port = z.coerce.number({ error: PORT_MESSAGE }).int(PORT_MESSAGE).min(0, PORT_MESSAGE).max(65_535, PORT_MESSAGE);

const schema = z.object({
  DATABASE_URL: z
    .string()
    .default("postgres://postgres@localhost:5432/prim")
    .refine((v) => /^postgres(ql)?:\/\//.test(v) && URL.canParse(v), {
      message: "DATABASE_URL must be a postgres:// URL",
    }),
  REDIS_URL: z
    .string()
    .default("redis://localhost:6379")
    .refine((v) => /^rediss?:\/\//.test(v) && URL.canParse(v), { message: "REDIS_URL must be a redis:// URL" }),
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
  PRIM_API_PORT: port.default(8787),
  PRIM_PUBLIC_API_URL: urlString("PRIM_PUBLIC_API_URL").optional(),
  /** The internal listener (`POST /internal/invoke`, for apps/mcp); on loopback unless set. */
  PRIM_INTERNAL_PORT: port.default(8789),
  PRIM_INTERNAL_HOST: z.string().min(1).default("127.0.0.1"),
  PRIM_INTERNAL_SECRET: z.string().min(32, "PRIM_INTERNAL_SECRET must be at least 32 characters").optional(),
  /** `off` runs without limits or metering (benchmarks' baseline); anything else is on. */
  PRIM_LIMITS: z.enum(["on", "off"]).default("on"),
  /** The header a trusted proxy sets to the client's address (signed URLs are limited per IP). */
  PRIM_CLIENT_IP_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "PRIM_CLIENT_IP_HEADER must be a header name")
    .optional(),
  PRIM_MASTER_KEY: z
    .string()
    .regex(/^[0-9a-f]{64}$/i, "PRIM_MASTER_KEY must be 64 hex characters (32 bytes)")
    .optional(),
});

export type ApiEnv = z.infer<typeof schema> & { publicApiUrl: string };

/** The configuration, or an Error whose message lists every bad variable, one per line. */
export function readApiEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  const parsed = schema.safeParse(source);
  const lines = parsed.success ? [] : parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
  // Checked apart from the schema, so it is reported together with the other problems.
  if (source.PRIM_BLOBS === "s3" && !source.S3_BUCKET)
    lines.push("  S3_BUCKET: S3_BUCKET is required when PRIM_BLOBS=s3");
  if (!parsed.success || lines.length > 0) throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  const env = parsed.data;
  return { ...env, publicApiUrl: env.PRIM_PUBLIC_API_URL ?? `http://localhost:${env.PRIM_API_PORT}` };
}
