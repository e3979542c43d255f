import { migrate } from "@prim/db";
import { listenInternal } from "@prim/http";
import { Redis } from "ioredis";
import { type ApiApp, createApiApp } from "./app.js";
import { readApiEnv } from "./env.js";

const REDIS_HINT = 'start it with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no';

/** Whether Redis answers a PING within `timeoutMs` (one try, no reconnects). */
async function redisAnswers(url: string, timeoutMs = 2000): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * What `npm run cloud` runs for the api: reads the configuration, applies migrations, checks
 * Redis, starts the app. Any failure is one clear Error (the caller prints it and exits 1).
 */
export async function startApi(
  source: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = console.log,
): Promise<{ url: string; internalUrl: string | undefined; api: ApiApp }> {
  const env = readApiEnv(source);
  const { applied } = await migrate({ databaseUrl: env.DATABASE_URL });
  if (applied.length > 0) log(`prim cloud: applied ${applied.join(", ")}`);
  if (!(await redisAnswers(env.REDIS_URL))) {
    throw new Error(`Redis does not answer at ${new URL(env.REDIS_URL).host}; ${REDIS_HINT}`);
  }
  const api = await createApiApp(env);
  try {
    const url = await api.app.listen({ port: env.PRIM_API_PORT, host: env.PRIM_LISTEN_HOST });
    const internalUrl =
      api.internal === undefined
        ? undefined
        : await listenInternal(api.internal, { port: env.PRIM_INTERNAL_PORT, host: env.PRIM_INTERNAL_HOST });
    // Other processes reach this cell at PRIM_CELL_URL, else where its internal listener is
    // (unless that is a wildcard address, which names no host to them). createApiApp has
    // registered the cell and cleaned up after moves already: only the address is new.
    const wildcard = /^(0\.0\.0\.0|::|\[::\])$/.test(env.PRIM_INTERNAL_HOST);
    await api.cellService.announce(wildcard ? null : (internalUrl ?? null));
    return { url, internalUrl, api };
  } catch (err) {
    await api.close();
    throw err;
  }
}

/** The process: start, print the URL, close cleanly on SIGINT/SIGTERM. */
export async function main(): Promise<void> {
  let started: Awaited<ReturnType<typeof startApi>>;
  try {
    started = await startApi();
  } catch (err) {
    console.error(`prim cloud: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  console.log(`prim cloud: api listening on ${started.url}`);
  if (started.internalUrl !== undefined) console.log(`prim cloud: internal invoke on ${started.internalUrl}`);
  const stop = (signal: string) => {
    console.log(`prim cloud: ${signal}, closing`);
    started.api.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`prim cloud: closing failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}
