import { configurationError, controlPlaneEnv, urlString } from "@prim/db";
import { z } from "zod";

/**
 * What a cell is made of, as configuration (CLOUD.md, Processes and "Scale-out"): its data
 * directory, blobs, master key, id and address, ships, and the cells' shared secret. apps/api's
 * schema spreads these fields in; the operator's commands (`prim admin fsck`, `workspace
 * move`, `cell rebuild`) read them alone with `readCellEnv`, so they need no app.
 */
export const cellEnv = {
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
  /** The cells' shared secret: the internal listener (`POST /internal/invoke`, forwards, moves). */
  PRIM_INTERNAL_SECRET: z.string().min(32, "PRIM_INTERNAL_SECRET must be at least 32 characters").optional(),
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
};

const schema = z.object({ ...controlPlaneEnv, ...cellEnv });

/** A cell's configuration with the control plane's connections (apps/api's `ApiEnv` is one). */
export type CellEnv = z.infer<typeof schema>;

/** The rules the schema cannot say field by field, one line each (checked with the schema's). */
export function cellEnvProblems(source: NodeJS.ProcessEnv): string[] {
  return source.PRIM_BLOBS === "s3" && !source.S3_BUCKET
    ? ["  S3_BUCKET: S3_BUCKET is required when PRIM_BLOBS=s3"]
    : [];
}

/** The cell's configuration, or an Error whose message lists every bad variable, one per line. */
export function readCellEnv(source: NodeJS.ProcessEnv): CellEnv {
  const parsed = schema.safeParse(source);
  const extra = cellEnvProblems(source);
  if (!parsed.success || extra.length > 0) throw configurationError(parsed.error?.issues ?? [], extra);
  return parsed.data;
}
