import { z } from "zod";

/** The only place the CLI reads process.env. Flags override these. */
const schema = z.object({
  PRIM_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  PRIM_DATA_DIR: z.string().min(1).optional(),
  PRIM_ROOT_TOKEN: z.string().min(1).optional(),
  // When writes are acknowledged (`prim dev --durable` is the same as `durable`); default fast.
  PRIM_DURABILITY: z.enum(["fast", "durable"]).optional(),
  // Memory recall's embeddings endpoint (OpenAI-compatible); unset = no embeddings, no network.
  PRIM_EMBEDDINGS_URL: z.url().optional(),
  PRIM_EMBEDDINGS_MODEL: z.string().min(1).optional(),
  PRIM_EMBEDDINGS_KEY: z.string().min(1).optional(),
  // `prim login` / `whoami` / `logout` (src/credentials.ts). Empty counts as unset there, so a
  // stray `PRIM_API_KEY=` never stops `prim dev`.
  PRIM_API_URL: z.string().optional(),
  PRIM_API_KEY: z.string().optional(),
  PRIM_CONFIG_DIR: z.string().optional(),
  XDG_CONFIG_HOME: z.string().optional(),
  HOME: z.string().optional(),
});

export type Env = z.infer<typeof schema>;

/** Credentials the CLI takes from its environment and no child process of it needs. */
const SECRETS = ["PRIM_ROOT_TOKEN", "PRIM_EMBEDDINGS_KEY", "PRIM_API_KEY"] as const;

export function readEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    throw new Error(
      `invalid environment: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  return parsed.data;
}

/**
 * Drops the credentials from this process's environment once read, so the processes the engine
 * starts (SQL hosts) do not inherit them. `PRIM_ROOT_TOKEN` is the preferred way to pass the
 * root token: unlike `--root-token`, the environment is readable only by the same user.
 */
export function forgetEnvSecrets(target: NodeJS.ProcessEnv = process.env): void {
  for (const name of SECRETS) delete target[name];
}

/** Said on stderr when the root token came as a flag (any local user sees flags in `ps`). */
export const ROOT_TOKEN_FLAG_WARNING =
  "prim: warning: --root-token is visible to other local users (ps); prefer the PRIM_ROOT_TOKEN environment variable";

/** Said on stderr when an API key came as a flag (`prim login --key`), for the same reason. */
export const API_KEY_FLAG_WARNING =
  "prim: warning: --key is visible to other local users (ps); prefer the PRIM_API_KEY environment variable or the prompt";

/** The cloud's control-plane database (`prim migrate`, `prim admin`); CLOUD.md's default. */
export function databaseUrl(source: NodeJS.ProcessEnv = process.env): string {
  return source.DATABASE_URL ?? "postgres://postgres@localhost:5432/prim";
}

/**
 * The environment `prim admin fsck`, `workspace move` and `cell rebuild` read the cells'
 * configuration from (@prim/cells `readCellEnv`), with `--database-url` over DATABASE_URL.
 */
export function cellEnvSource(databaseUrlFlag: string | undefined, source = process.env): NodeJS.ProcessEnv {
  return { ...source, DATABASE_URL: databaseUrlFlag ?? databaseUrl(source) };
}

/** The cloud's Redis (`prim admin key revoke` publishes the revocation there). */
export function redisUrl(source: NodeJS.ProcessEnv = process.env): string {
  return source.REDIS_URL ?? "redis://localhost:6379";
}

/** Stripe for `prim admin stripe sync`: the secret key (required there) and a stand-in's URL. */
export function stripeConfig(source: NodeJS.ProcessEnv = process.env): { secretKey: string; apiUrl?: string } {
  const secretKey = source.STRIPE_SECRET_KEY;
  if (secretKey === undefined || secretKey === "") throw new Error("STRIPE_SECRET_KEY is required");
  return { secretKey, ...(source.STRIPE_API_URL ? { apiUrl: source.STRIPE_API_URL } : {}) };
}
