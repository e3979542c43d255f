import { z } from "zod";

/** The only place the CLI reads process.env. Flags override these. */
const schema = z.object({
  PRIM_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  PRIM_DATA_DIR: z.string().min(1).optional(),
  PRIM_ROOT_TOKEN: z.string().min(1).optional(),
  // Memory recall's embeddings endpoint (OpenAI-compatible); unset = no embeddings, no network.
  PRIM_EMBEDDINGS_URL: z.url().optional(),
  PRIM_EMBEDDINGS_MODEL: z.string().min(1).optional(),
  PRIM_EMBEDDINGS_KEY: z.string().min(1).optional(),
});

export type Env = z.infer<typeof schema>;

export function readEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    throw new Error(
      `invalid environment: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  return parsed.data;
}
