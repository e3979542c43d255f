const START_HINT = "start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start";

/** A connection failure as one clear line: where, why, and how to start a local server. */
export function connectionError(err: unknown, url: URL): Error {
  const code = (err as { code?: string }).code;
  const where = redact(`${url.protocol}//${url.username ? `${url.username}@` : ""}${url.host}${url.pathname}`);
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EHOSTUNREACH" || code === "ETIMEDOUT") {
    return new Error(`Postgres does not answer at ${where} (${code}); ${START_HINT}`, { cause: err });
  }
  return new Error(`cannot connect to Postgres at ${where}: ${(err as Error).message}`, { cause: err });
}

/** A URL without its password, for messages. */
export function redact(text: string): string {
  return text.replace(/\/\/([^:/@]+):[^@/]*@/, "//$1:***@");
}

/** A pool that has answered once (a clear error if Postgres does not). */
export async function openPool(databaseUrl: string, max = 4): Promise<import("pg").Pool> {
  const { default: pg } = await import("pg");
  const url = new URL(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  pool.on("error", () => {});
  try {
    await pool.query("SELECT 1");
  } catch (err) {
    await pool.end().catch(() => {});
    throw connectionError(err, url);
  }
  return pool;
}

/** Runs `fn` in one transaction on a pooled client: committed if it returns, rolled back if it throws. */
export async function inTransaction<T>(
  pool: import("pg").Pool,
  fn: (client: import("pg").PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
