import type { ApiResponse } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { SECRET, scopedAuth, type VaultServer, withGrantedSecret } from "./vault-helpers.js";

/** A vault with API_KEY granted to the echo server, and a scoped key switchable per test. */
async function scopedVault() {
  const auth = scopedAuth();
  const server = await withGrantedSecret({ authenticate: auth.authenticate });
  const group = (await server.api("GET", "/v1/groups/app")).body;
  const call = (method: string, path: string, body?: unknown) => server.api(method, path, body, auth.headers);
  return { ...server, groupId: group.id as string, as: auth.as, call };
}

/** Every vault route, called with the scoped key. */
function routes(server: VaultServer, call: (m: string, p: string, b?: unknown) => Promise<ApiResponse>) {
  const { base, echo } = server;
  return {
    put: () => call("PUT", `${base}/secrets/OTHER_KEY`, { value: SECRET }),
    deleteSecret: () => call("DELETE", `${base}/secrets/API_KEY`),
    grant: () => call("POST", `${base}/grants`, { name: "API_KEY", allow: { hosts: ["evil.example.com"] } }),
    revoke: () => call("DELETE", `${base}/grants/API_KEY`),
    list: () => call("GET", `${base}/secrets`),
    grants: () => call("GET", `${base}/grants`),
    stats: () => call("GET", `${base}/stats`),
    fetch: () => call("POST", `${base}/fetch`, { url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" } }),
  };
}

function expectError(res: ApiResponse, status: number, code: string, what: string) {
  expect(res.status, what).toBe(status);
  expect(res.body.error.code, what).toBe(code);
}

describe("vault: scoped keys", () => {
  it("answers 403 forbidden to storing, deleting, granting and revoking, even with every tool", async () => {
    const server = await scopedVault();
    server.as(server.groupId, null);
    const r = routes(server, server.call);
    for (const [what, call] of Object.entries({
      put: r.put,
      deleteSecret: r.deleteSecret,
      grant: r.grant,
      revoke: r.revoke,
    })) {
      expectError(await call(), 403, "forbidden", what);
    }
    // Nothing changed: the account still sees one secret with its original grant.
    const list = await server.api("GET", `${server.base}/secrets`);
    expect(list.body.data).toMatchObject([{ name: "API_KEY", grant: { hosts: [server.echo.host] } }]);
    expect((await r.list()).status).toBe(200);
    expect((await r.grants()).status).toBe(200);
    expect((await r.fetch()).status).toBe(200);
  });

  it("lets vault_list list secrets, grants and stats, but not fetch", async () => {
    const server = await scopedVault();
    server.as(server.groupId, ["vault_list"]);
    const r = routes(server, server.call);
    expect((await r.list()).body.data).toMatchObject([{ name: "API_KEY", version: 1 }]);
    expect((await r.grants()).body.data).toMatchObject([{ name: "API_KEY", hosts: [server.echo.host] }]);
    expect((await r.stats()).body).toMatchObject({ items: 1 });
    expectError(await r.fetch(), 403, "tool_not_allowed", "fetch");
    expect(server.echo.received).toEqual([]);
  });

  it("lets vault_use fetch, but not list", async () => {
    const server = await scopedVault();
    server.as(server.groupId, ["vault_use"]);
    const r = routes(server, server.call);
    const res = await r.fetch();
    expect(res.status).toBe(200);
    expect(server.echo.received[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expectError(await r.list(), 403, "tool_not_allowed", "list");
    expectError(await r.grants(), 403, "tool_not_allowed", "grants");
    expectError(await r.stats(), 403, "tool_not_allowed", "stats");
  });

  it("answers tool_not_allowed to a key with other tools, forbidden on the account routes", async () => {
    const server = await scopedVault();
    server.as(server.groupId, ["kv_*", "db_query"]);
    const r = routes(server, server.call);
    for (const [what, call] of Object.entries({ list: r.list, grants: r.grants, stats: r.stats, fetch: r.fetch })) {
      expectError(await call(), 403, "tool_not_allowed", what);
    }
    for (const [what, call] of Object.entries({ put: r.put, grant: r.grant })) {
      expectError(await call(), 403, "forbidden", what);
    }
  });

  it("answers 404 to a key of another group", async () => {
    const server = await scopedVault();
    await server.api("POST", "/v1/groups", { name: "elsewhere" });
    const other = (await server.api("GET", "/v1/groups/elsewhere")).body;
    server.as(other.id, null);
    const r = routes(server, server.call);
    for (const [what, call] of Object.entries({ list: r.list, fetch: r.fetch, grants: r.grants })) {
      expectError(await call(), 404, "not_found", what);
    }
    expect(server.echo.received).toEqual([]);
  });

  it("records the scoped key as the actor of a fetch", async () => {
    const server = await scopedVault();
    server.as(server.groupId, ["vault_use"]);
    await routes(server, server.call).fetch();
    await server.engine.services.audit.flush();
    const [entry] = await server.engine.services.catalog.listAudit({ action: "vault.fetch", limit: 1 });
    expect(entry).toMatchObject({ actor: "key:key_vault", target: "API_KEY", instance: "keys", primitive: "vault" });
  });
});
