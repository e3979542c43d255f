// vault_request_secret end to end (issue 40, item 6): the official SDK client declares URL-mode
// elicitation; its handler accepts and, like a person in a browser, opens the elicited URL (the
// local engine's page, over real HTTP) and submits the form. The value goes into the vault, the
// tool resolves `set: true`, vault_use can send it, and the value is nowhere in a tool result or
// the audit trail. Also: a client without the capability gets the URL in an error; decline,
// expiry, a second answer and the page's defences (escaping, form token, cross-site).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitRequestURLParams,
} from "@modelcontextprotocol/sdk/types.js";
import { Engine, LOCAL_PRINCIPAL, ManualClock } from "@prim/engine";
import { createLocalServer, ROOT_PRINCIPAL } from "@prim/http";
import { openGroup } from "@prim/wire";
import { afterEach, expect, it } from "vitest";
import { createMcpServer, mountMcp } from "../src/index.js";
import { forEachInvoker, startMcpServer } from "./helpers.js";

const VALUE = `sk-elicited-${randomBytes(12).toString("hex")}`;
const SECRET_REQUEST_TTL_MS = 15 * 60_000;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

type Answer = "accept" | "decline" | "cancel";
type Person = (url: string) => Promise<unknown>;

/** An HTTP server on 127.0.0.1 answering with the Authorization header it received. */
async function echoServer() {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ok: true, authorization: req.headers.authorization ?? null }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The form token of the page at `url` (its form's hidden field; none once the request is answered). */
async function formToken(url: string): Promise<string> {
  const html = await (await fetch(url)).text();
  return /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? "";
}

/** Posts the page's form with `fields` (a form loaded earlier: `token`). */
async function post(url: string, token: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ form_token: token, ...fields }),
  });
  return { status: res.status, html: await res.text() };
}

/** What a person's browser does: GET the page, then POST its form with `fields`. */
async function submitPage(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return post(url, await formToken(url), fields, headers);
}

/** The person sets VALUE on the page. */
const setsValue: Person = (url) => submitPage(url, { action: "set", value: VALUE });

async function setup(query = "") {
  const s = await startMcpServer({ engine: { allowLoopbackFetch: true } });
  const plain = await s.connect("g");
  const vault = (await s.call(plain, "primitive_create", { name: "keys", type: "vault" })).data;
  /**
   * A session whose client declares URL elicitation: it answers `answer` and then, as the
   * person, runs `person` on the URL (not awaited by the answer, like a browser tab).
   */
  const elicitingClient = async (answer: Answer, person: Person | null) => {
    const client = new Client({ name: "eliciting", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
    const asked: ElicitRequestURLParams[] = [];
    const completed: string[] = [];
    const people: Promise<unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as ElicitRequestURLParams;
      asked.push(params);
      if (person !== null) people.push(person(params.url));
      return { action: answer };
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      completed.push(n.params.elicitationId);
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp/g${query}`));
    await client.connect(transport);
    closers.push(async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    });
    const progress: unknown[] = [];
    const call = async (args: Record<string, unknown>) => {
      const res = await client.callTool(
        { name: "vault_request_secret", arguments: { primitive: "keys", ...args } },
        undefined,
        {
          // A progress token: the wait reports progress (and a client may keep waiting on it).
          onprogress: (p) => progress.push(p),
          resetTimeoutOnProgress: true,
        },
      );
      expect(JSON.stringify(res)).not.toContain(VALUE);
      return { isError: res.isError === true, data: res.structuredContent as any };
    };
    return { client, asked, completed, people, call, progress };
  };
  const secrets = async () =>
    (await s.invoker.invoke<{ data: any[] }>(LOCAL_PRINCIPAL, "vault.list", vault.id, {})).data;
  return { s, plain, vault, elicitingClient, secrets };
}

const ask = {
  name: "PAYMENTS_KEY",
  reason: "To charge the order in the checkout flow.",
  allow: { hosts: ["127.0.0.1"], methods: ["GET"] },
};

forEachInvoker("MCP: vault_request_secret", (mode) => {
  it("elicits the page, the person sets the value there, the call resolves set: true and vault_use sends it", async () => {
    const t = await setup();
    const c = await t.elicitingClient("accept", setsValue);
    const result = await c.call(ask);
    expect(result).toMatchObject({
      isError: false,
      data: { name: "PAYMENTS_KEY", set: true, status: "set", version: 1, elicitation: "accept" },
    });
    // The elicitation named the page, its id is the request's, and completion was announced.
    expect(c.asked).toEqual([
      {
        mode: "url",
        elicitationId: result.data.request,
        url: `${t.s.url}/secret-requests/${t.vault.id}/${result.data.request}`,
        message: expect.stringContaining("PAYMENTS_KEY"),
      },
    ]);
    expect(result.data.url).toBe(c.asked[0]?.url);
    expect(c.completed).toEqual([result.data.request]);
    expect(c.progress[0]).toMatchObject({ progress: 1, message: "waiting for a person to set PAYMENTS_KEY" });
    const [page] = (await Promise.all(c.people)) as { status: number; html: string }[];
    expect(page?.status).toBe(200);
    expect(page?.html).toContain("is set (version 1)");
    expect(page?.html).not.toContain(VALUE);

    // The grant came with it: vault_use sends the value, and its answer has it redacted.
    const echo = await echoServer();
    const used = await t.s.call(t.plain, "vault_use", {
      primitive: "keys",
      url: `${echo.origin}/charge`,
      auth: { bearer: "PAYMENTS_KEY" },
    });
    expect(used.isError, used.text).toBe(false);
    expect(echo.seen[0]?.authorization).toBe(`Bearer ${VALUE}`);
    expect(JSON.stringify(used)).not.toContain(VALUE);

    expect(await t.secrets()).toMatchObject([{ name: "PAYMENTS_KEY", version: 1, grant: { hosts: ["127.0.0.1"] } }]);
    const audit = await t.s.audit();
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(["vault.request", "vault.request_fulfil"]));
    expect(JSON.stringify(audit)).not.toContain(VALUE);
  });

  it("a client without URL elicitation gets an error with the URL; after the person sets it, a call with `request` waits and says set", async () => {
    const t = await setup();
    const first = await t.s.call(t.plain, "vault_request_secret", { primitive: "keys", ...ask });
    expect(first.isError).toBe(true);
    expect(first.data.error.code).toBe("invalid_request");
    const url = /open (\S+) to set/.exec(first.data.error.message)?.[1] as string;
    expect(url).toMatch(new RegExp(`^${t.s.url}/secret-requests/${t.vault.id}/sreq_`));
    const request = url.split("/").at(-1) as string;
    expect(first.data.error.message).toContain(`request "${request}"`);

    const waiting = t.s.call(t.plain, "vault_request_secret", { primitive: "keys", request });
    expect((await setsValue(url)) as { status: number }).toMatchObject({ status: 200 });
    const answered = await waiting;
    expect(answered).toMatchObject({ isError: false, data: { name: "PAYMENTS_KEY", set: true, status: "set" } });
    expect(JSON.stringify(answered)).not.toContain(VALUE);
  });

  it("a declined elicitation leaves the request open; declined on the page, the call says set: false and nothing is stored", async () => {
    const t = await setup();
    const c = await t.elicitingClient("decline", null);
    const declinedInClient = await c.call(ask);
    expect(declinedInClient.data).toMatchObject({ set: false, status: "pending", elicitation: "decline" });
    expect(c.completed).toEqual([]);
    const earlierForm = await formToken(declinedInClient.data.url);

    const later = await t.elicitingClient("accept", (url) => submitPage(url, { action: "decline" }));
    const declined = await later.call({ request: declinedInClient.data.request });
    expect(declined.data).toMatchObject({ set: false, status: "declined", version: null });
    expect(await t.secrets()).toEqual([]);
    // Answered once: setting it afterwards is refused on the page.
    const again = await post(declinedInClient.data.url, earlierForm, { action: "set", value: VALUE });
    expect(again.status).toBe(409);
    expect(again.html).toContain("declined");
    expect(await t.secrets()).toEqual([]);
  });

  it("a second answer is refused and keeps the first value", async () => {
    const t = await setup();
    // The person opens the page twice (two tabs) and submits both forms.
    let secondTab = "";
    const c = await t.elicitingClient("accept", async (url) => {
      secondTab = await formToken(url);
      return setsValue(url);
    });
    const first = await c.call(ask);
    expect(first.data.set).toBe(true);
    const again = await post(first.data.url, secondTab, { action: "set", value: "replaced-value" });
    expect(again.status).toBe(409);
    expect(again.html).toContain("cannot be answered again");
    expect(await t.secrets()).toMatchObject([{ name: "PAYMENTS_KEY", version: 1 }]);
  });

  it.skipIf(mode === "remote")("expires: a waiting call answers expired and the page no longer sets it", async () => {
    const t = await setup();
    let url = "";
    let form = "";
    const c = await t.elicitingClient("accept", async (u) => {
      form = await formToken(u);
      url = u;
    });
    const pending = c.call(ask);
    // Once the call waits on the request, engine time passes its expiry.
    await expect.poll(() => url).not.toBe("");
    const request = url.split("/").at(-1) as string;
    const vault = t.s.engine.services.files.handle(t.vault.id, "vault").store as {
      requests: { waiting(id: string): number };
    };
    await expect.poll(() => vault.requests.waiting(request)).toBe(1);
    t.s.clock.advance(SECRET_REQUEST_TTL_MS);
    expect((await pending).data).toMatchObject({ set: false, status: "expired" });
    const late = await post(url, form, { action: "set", value: VALUE });
    expect(late.status).toBe(409);
    expect(late.html).toContain("expired");
    expect(await t.secrets()).toEqual([]);
  });

  it("needs the tool: a session narrowed without it is refused, one with it asks", async () => {
    const t = await setup();
    const without = await t.s.connect("g", "?tools=vault_list,vault_use");
    const refused = await t.s.call(without, "vault_request_secret", { primitive: "keys", ...ask });
    expect(refused).toMatchObject({ isError: true, data: { error: { code: "tool_not_allowed" } } });
    const narrowed = await t.elicitingClient("accept", setsValue);
    expect((await narrowed.call(ask)).data).toMatchObject({ set: true });
  });
});

// The page's own defences. Local auth (Host, cross-site) is the local engine's: in process only
// (the remote runs' MCP app authenticates every request as local).
forEachInvoker("local secret request page", (mode) => {
  it.skipIf(mode === "remote")(
    "shows the agent's words escaped, and refuses a form without its token or from another site",
    async () => {
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
    },
  );

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

  it.skipIf(mode === "remote")(
    "with a root token (prim dev's server), the page opens without it and its form asks for it",
    async () => {
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
    },
  );

  it.skipIf(mode === "remote")(
    "fails closed where the page was not told the root token the server requires",
    async () => {
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
    },
  );

  it.skipIf(mode === "remote")("an in-process stdio server has no page: refused before anything is asked", async () => {
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
