// The local engine's secret request page (issue 40, item 6): its defences (escaping, headers,
// form token, cross-site), its errors, the root token (on prim dev's own server, and failing
// closed where the page was not told it), and an in-process stdio server that has no page.
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Engine, LOCAL_PRINCIPAL, ManualClock } from "@prim/engine";
import { createLocalServer, ROOT_PRINCIPAL } from "@prim/http";
import { openGroup } from "@prim/wire";
import { expect, it } from "vitest";
import { createMcpServer, mountMcp } from "../src/index.js";
import { forEachInvoker, inProcessOnly, startMcpServer } from "./helpers.js";
import { ask, closers, formToken, post, setup, submitPage, VALUE } from "./secret-request-helpers.js";

// The page's own defences. Local auth (Host, cross-site) is the local engine's: in process only
// (the remote runs' MCP app authenticates every request as local).
forEachInvoker("local secret request page", () => {
  it("answers 404 for an unknown request, and 400 with the engine's message for an empty value", async () => {
    const t = await setup();
    const missing = await fetch(`${t.s.url}/secret-requests/${t.vault.id}/sreq_AAAAAAAAAAAAAAAAAAAAAA`);
    expect(missing.status).toBe(404);
    const first = await t.s.call(t.plain, "vault_request_secret", { primitive: "keys", name: "API_KEY", reason: "r" });
    const url = /open (\S+) to set/.exec(first.data.error.message)?.[1] as string;
    const empty = await submitPage(url, { action: "set", value: "" });
    expect(empty.status).toBe(400);
    expect(empty.html).toContain("value: must not be empty");
    expect(await t.secrets()).toEqual([]);
  });
});

// What needs the engine in this process (its clock, REST routes or local auth): once.
inProcessOnly("local secret request page", () => {
  it("shows the agent's words escaped, and refuses a form without its token or from another site", async () => {
    const t = await setup();
    const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)> "quoted" 'single'`;
    const first = await t.s.call(t.plain, "vault_request_secret", {
      primitive: "keys",
      name: "API_KEY",
      reason: hostile,
    });
    const url = /open (\S+) to set/.exec(first.data.error.message)?.[1] as string;

    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const html = await page.text();
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(html).toContain('type="password" autocomplete="off"');

    // No token, a wrong one, or a cross-site post: refused, nothing stored.
    const noToken = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ action: "set", value: VALUE }),
    });
    expect(noToken.status).toBe(403);
    expect((await submitPage(url, { action: "set", value: VALUE, form_token: "forged" })).status).toBe(403);
    const crossSite = await submitPage(url, { action: "set", value: VALUE }, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    const otherOrigin = await submitPage(url, { action: "set", value: VALUE }, { origin: "https://evil.example" });
    expect(otherOrigin.status).toBe(403);
    expect(await t.secrets()).toEqual([]);

    // The same form from the page itself sets it.
    const set = await submitPage(url, { action: "set", value: VALUE }, { origin: t.s.url });
    expect(set.status).toBe(200);
    expect(set.html).not.toContain(VALUE);
    expect(await t.secrets()).toMatchObject([{ name: "API_KEY", version: 1, grant: null }]);
  });

  it("with a root token (prim dev's server), the page opens without it and its form asks for it", async () => {
    // The local engine's own server, as `prim dev` composes it: REST, the page, MCP.
    const dir = mkdtempSync(join(tmpdir(), "prim-page-"));
    const engine = Engine.openLocal({ dataDir: dir, clock: new ManualClock(1_800_000_000_000) });
    const app = createLocalServer({ engine, rootToken: "root-token-123" });
    mountMcp(app, engine);
    await app.listen({ port: 0, host: "127.0.0.1" });
    closers.push(async () => {
      await app.close();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const auth = { authorization: "Bearer root-token-123" };
    const client = new Client({ name: "plain", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/g`), { requestInit: { headers: auth } });
    await client.connect(transport);
    closers.push(() => client.close());
    const tool = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })).structuredContent as any;
    const vault = await tool("primitive_create", { name: "keys", type: "vault" });
    const first = await tool("vault_request_secret", { primitive: "keys", name: "API_KEY", reason: "r" });
    const url = /open (\S+) to set/.exec(first.error.message)?.[1] as string;
    expect(url).toContain(`/secret-requests/${vault.id}/`);
    // Elsewhere the token is still required.
    expect((await fetch(`${base}/v1/primitives/${vault.id}/secrets`)).status).toBe(401);
    const token = await formToken(url);
    expect(token).not.toBe("");
    for (const root of [undefined, "wrong"]) {
      const refused = await post(url, token, {
        action: "set",
        value: VALUE,
        ...(root === undefined ? {} : { root_token: root }),
      });
      expect(refused.status).toBe(401);
    }
    const set = await post(url, token, { action: "set", value: VALUE, root_token: "root-token-123" });
    expect(set.status).toBe(200);
    const listed = await fetch(`${base}/v1/primitives/${vault.id}/secrets`, { headers: auth });
    expect(((await listed.json()) as { data: unknown[] }).data).toMatchObject([{ name: "API_KEY", version: 1 }]);
  });

  it("fails closed where the page was not told the root token the server requires", async () => {
    // The test host mounts the page without a root token while this tenant's auth has one.
    const s = await startMcpServer({ rootToken: "root-token-123" });
    const client = await s.connect("g", "", { authorization: "Bearer root-token-123" });
    await s.call(client, "primitive_create", { name: "keys", type: "vault" });
    const first = await s.call(client, "vault_request_secret", { primitive: "keys", name: "API_KEY", reason: "r" });
    const url = /open (\S+) to set/.exec(first.data.error.message)?.[1] as string;
    const page = await fetch(url);
    expect(page.status).toBe(403);
    expect(await page.text()).not.toContain("API_KEY");
    // The rightful caller (the token, over the engine) still reaches the request.
    const request = url.split("/").at(-1) as string;
    const vaultId = url.split("/").at(-2) as string;
    expect(await s.invoker.invoke(ROOT_PRINCIPAL, "vault.request_get", vaultId, { request })).toMatchObject({
      status: "pending",
    });
  });

  it("an in-process stdio server has no page: refused before anything is asked", async () => {
    const t = await setup();
    const server = createMcpServer({
      invoker: t.s.engine,
      principal: LOCAL_PRINCIPAL,
      group: await openGroup(t.s.engine, LOCAL_PRINCIPAL, "g"),
      baseUrl: "",
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "stdio-like", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
    await server.connect(serverSide);
    await client.connect(clientSide);
    closers.push(() => client.close());
    const res = await client.callTool({ name: "vault_request_secret", arguments: { primitive: "keys", ...ask } });
    expect(res.isError).toBe(true);
    expect((res.structuredContent as any).error).toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("no page"),
    });
    expect((await t.s.audit()).filter((e) => e.action === "vault.request")).toEqual([]);
  });
});
