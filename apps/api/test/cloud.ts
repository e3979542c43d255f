// A real api app for tests: its own migrated Postgres database, the machine's Redis, a temp data dir.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "@prim/db";
import { freshDatabase } from "../../../packages/db/test/pg.js";
import { type ApiApp, type ApiAppOptions, createApiApp, readApiEnv } from "../src/index.js";

export interface TestCloud {
  url: string;
  api: ApiApp;
  databaseUrl: string;
  /** A second app process's worth of state over the same database (another cell front). */
  second(): Promise<{ url: string; api: ApiApp }>;
  stop(): Promise<void>;
}

export async function startCloud(
  label: string,
  extraEnv: Record<string, string> = {},
  options: ApiAppOptions & { beforeListen?: (api: ApiApp) => void; port?: number } = {},
): Promise<TestCloud> {
  const db = freshDatabase(label);
  await migrate({ databaseUrl: db.url });
  const dirs: string[] = [];
  const apps: ApiApp[] = [];
  const start = async () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-cloud-"));
    dirs.push(dir);
    const env = readApiEnv({
      DATABASE_URL: db.url,
      PRIM_DATA_DIR: join(dir, "data"),
      PRIM_BLOBS: `local:${join(dir, "blobs")}`,
      PRIM_API_PORT: "0",
      // Limits have their own tests (limits.test.ts); elsewhere they would only slow suites down.
      PRIM_LIMITS: "off",
      ...extraEnv,
    });
    const api = await createApiApp(env, options);
    apps.push(api);
    options.beforeListen?.(api);
    const url = await api.app.listen({ port: apps.length === 1 ? (options.port ?? 0) : 0, host: "127.0.0.1" });
    return { url, api };
  };
  const first = await start();
  return {
    ...first,
    databaseUrl: db.url,
    second: start,
    stop: async () => {
      for (const api of apps.reverse()) await api.close();
      await db.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A JSON request with a Bearer key; answers status, body and headers. */
export async function call(
  base: string,
  key: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text), headers: res.headers };
}
