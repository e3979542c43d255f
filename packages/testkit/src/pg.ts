// Each test file gets its own Postgres database on the machine's server (CLOUD.md: integration
// tests use the real Postgres, each file in its own database), dropped when the file is done.
import { randomBytes } from "node:crypto";
import pg from "pg";

export const PG_ROOT = process.env.PRIM_TEST_PG ?? "postgres://postgres@127.0.0.1:5432";

/** A fresh database's URL (not created: `migrate` creates it) and a function that drops it. */
export function freshDatabase(label: string): { url: string; drop: () => Promise<void> } {
  const name = `prim_test_${label}_${randomBytes(5).toString("hex")}`;
  return {
    url: `${PG_ROOT}/${name}`,
    drop: async () => {
      const client = new pg.Client({ connectionString: `${PG_ROOT}/postgres` });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs `fn` with a connected client to `url`. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
