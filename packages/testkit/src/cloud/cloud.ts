// A real api app for tests, as production runs it (cells.ts: S3 in s3rver, limits on, durable
// writes): its own migrated Postgres database, the machine's Redis, a temp data directory.
import type { ApiApp } from "@prim/api";
import { fastWorkspace, startCells, type TestCellOptions } from "./cells.js";

export { FAST_ENTERPRISE, fastWorkspace } from "./cells.js";

export interface TestCloud {
  url: string;
  /** Its internal listener (the MCP app and the dashboard reach the engine there). */
  internalUrl: string;
  api: ApiApp;
  databaseUrl: string;
  /** Another cell over the same database and S3 (another api process). */
  second(): Promise<{ url: string; api: ApiApp }>;
  stop(): Promise<void>;
}

/** One cell (`cell-a`); `second()` adds `cell-b`, `cell-c`, …. */
export async function startCloud(
  label: string,
  extraEnv: Record<string, string> = {},
  options: TestCellOptions = {},
): Promise<TestCloud> {
  const cells = await startCells(label, ["cell-a"], extraEnv, options);
  const first = cells.cells[0] as (typeof cells.cells)[number];
  return {
    url: first.url,
    internalUrl: first.internalUrl,
    api: first.api,
    databaseUrl: cells.databaseUrl,
    second: async () => {
      const next = await cells.start(`cell-${String.fromCharCode(97 + cells.cells.length)}`);
      return { url: next.url, api: next.api };
    },
    stop: () => cells.stop(),
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

/**
 * An Enterprise workspace (a rate no test reaches) with groups `app` and `other`, a kv `cache` in
 * each holding `k` = its group's name: the minted-keys suites' starting point (REST and MCP).
 */
export async function twoGroupWorkspace(
  url: string,
  pool: Parameters<typeof fastWorkspace>[0],
  name: string,
): Promise<{ workspace: string; root: string; kvApp: string; kvOther: string }> {
  const made = await fastWorkspace(pool, name);
  const root = made.key;
  const kv: Record<string, string> = {};
  for (const group of ["app", "other"]) {
    const created = await call(url, root, "POST", "/v1/groups", { name: group });
    if (created.status !== 201) throw new Error(`group ${group}: ${created.status}`);
    kv[group] = (await call(url, root, "POST", "/v1/primitives", { name: "cache", type: "kv", group })).body.id;
    await call(url, root, "PUT", `/v1/primitives/${kv[group]}/keys/k`, { value: group });
  }
  return { workspace: made.workspace.id, root, kvApp: kv.app as string, kvOther: kv.other as string };
}
