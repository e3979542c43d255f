import { z } from "zod";

/**
 * The configuration every cloud app reads the same way (CLOUD.md, Processes): the control
 * plane's connections, ports and URLs, as zod fields each app's own schema spreads in.
 */
export const urlString = (name: string) =>
  z.string().refine((v) => URL.canParse(v), { message: `${name} must be a URL` });

const PORT_MESSAGE = "must be a port number (0-65535)";
export const portNumber = z.coerce
  .number({ error: PORT_MESSAGE })
  .int(PORT_MESSAGE)
  .min(0, PORT_MESSAGE)
  .max(65_535, PORT_MESSAGE);

/** `DATABASE_URL` and `REDIS_URL` with their local defaults. */
export const controlPlaneEnv = {
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
};

/** Every problem of a failed parse, one per line, naming the variable. */
export function configurationError(issues: readonly z.core.$ZodIssue[], extra: readonly string[] = []): Error {
  const lines = [...issues.map((i) => `  ${i.path.join(".")}: ${i.message}`), ...extra];
  return new Error(`invalid configuration:\n${lines.join("\n")}`);
}
