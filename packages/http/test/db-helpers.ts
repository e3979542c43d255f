import { LOCAL_PRINCIPAL, type PrimitiveInfo, type Principal } from "@prim/engine";
import { startServer, type TestServer, type TestServerOptions } from "@prim/testkit/rest";

/** The five keys of a database query result, sorted. */
export const RESULT_KEYS = ["columns", "last_insert_rowid", "rows", "rows_affected", "truncated"];

/** Creates a db primitive `name` in group `group` (creating the group if needed). */
export async function createDb(server: TestServer, name: string, group = "app"): Promise<PrimitiveInfo> {
  const groups = await server.engine.invoke<{ data: { name: string }[] }>(LOCAL_PRINCIPAL, "group.list", null, {});
  if (!groups.data.some((g) => g.name === group)) {
    await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: group });
  }
  return server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, { name, type: "db", group });
}

export interface DbServer extends TestServer {
  db: PrimitiveInfo;
  base: string;
  /** POST `<base>/query`; `params` and `branch` are left out when undefined. */
  q(sql: string, params?: unknown, branch?: string): Promise<{ status: number; body: any }>;
  /** POST `<base>/batch` with `{ statements, branch? }`. */
  batch(statements: { sql: string; params?: unknown }[], branch?: string): Promise<{ status: number; body: any }>;
}

function attach(server: TestServer, db: PrimitiveInfo, headers: Record<string, string> = {}): DbServer {
  const base = `/v1/primitives/${db.id}`;
  return {
    ...server,
    db,
    base,
    q: (sql, params, branch) => server.api("POST", `${base}/query`, { sql, params, branch }, headers),
    batch: (statements, branch) => server.api("POST", `${base}/batch`, { statements, branch }, headers),
  };
}

/** A server with group `app` and a db primitive `main` in it. */
export async function withDb(options: TestServerOptions = {}): Promise<DbServer> {
  const server = await startServer(options);
  return attach(server, await createDb(server, "main"));
}

/** Reattaches the helpers to another server (same dataDir after a restart) and primitive. */
export function dbOn(server: TestServer, db: PrimitiveInfo, headers?: Record<string, string>): DbServer {
  return attach(server, db, headers);
}

/**
 * A server whose requests carrying `Authorization: Bearer scoped` run as a key of group `app`
 * with the tools set by `as(...)`; other requests run as the local account.
 */
export async function withScopedDb() {
  let scoped: Principal = LOCAL_PRINCIPAL;
  const server = await withDb({
    authenticate: (req) => (req.headers.authorization === "Bearer scoped" ? scoped : LOCAL_PRINCIPAL),
  });
  const group = (await server.api("GET", "/v1/groups/app")).body;
  /** Sets the key's tools (and optionally binds it to another group id). */
  const as = (tools: string[] | null, groupId: string = group.id) => {
    scoped = { kind: "scoped", workspace: "local", actor: "key:key_db", groupId, tools };
  };
  const key = dbOn(server, server.db, { authorization: "Bearer scoped" });
  const call = (method: string, path: string, body?: unknown) =>
    server.api(method, path, body, { authorization: "Bearer scoped" });
  return { ...server, as, key, call };
}
