// vault_list and vault_use over Streamable HTTP. Secrets and grants are made by the account over
// REST (the tools cannot), the destination is a real HTTP server on 127.0.0.1, and the secret's
// value must never come back in a tool result.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LOCAL_PRINCIPAL } from "@prim/engine";
import { afterEach, expect, it } from "vitest";
import { forEachInvoker, startMcpServer } from "./helpers.js";

const SECRET = `sk-test-${randomBytes(16).toString("hex")}`;

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** An HTTP server on 127.0.0.1 that answers every request with what it received, as JSON. */
async function echoServer() {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      received.push(r);
      res.setHeader("content-type", "application/json");
      res.setHeader("x-echo-auth", String(req.headers.authorization ?? ""));
      res.end(JSON.stringify(r));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** A server with loopback fetches allowed, group `g`, a vault `keys` with API_KEY granted to 127.0.0.1. */
async function withVault(grant = true) {
  const s = await startMcpServer({ engine: { allowLoopbackFetch: true } });
  const client = await s.connect("g");
  const created = await s.call(client, "primitive_create", { name: "keys", type: "vault" });
  const id = created.data.id as string;
  // Secrets and grants are written by an account (REST's PUT /secrets, POST /grants), never
  // through MCP: here the same operations through the invoker, in process or remote alike.
  const admin = (op: string, input: unknown) => s.invoker.invoke<any>(LOCAL_PRINCIPAL, op, id, input);
  expect(await admin("vault.put", { name: "API_KEY", value: SECRET })).toMatchObject({ name: "API_KEY" });
  expect(await admin("vault.put", { name: "OTHER", value: "other-value-123" })).toMatchObject({ name: "OTHER" });
  if (grant) {
    expect(await admin("vault.grant", { name: "API_KEY", allow: { hosts: ["127.0.0.1"] } })).toMatchObject({
      name: "API_KEY",
    });
  }
  return { s, client, id, admin, echo: await echoServer() };
}

/** Calls a tool and checks that the secret is nowhere in the whole answer (plain or base64). */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const res = await client.callTool({ name, arguments: args });
  const whole = JSON.stringify(res);
  expect(whole).not.toContain(SECRET);
  expect(whole).not.toContain(Buffer.from(SECRET).toString("base64"));
  return { isError: res.isError === true, data: res.structuredContent as any, text: (res.content as any)[0]?.text };
}

forEachInvoker("MCP tools: vault", () => {
  it("vault_list lists secrets (with their grant) and grants, never values", async () => {
    const { client } = await withVault();
    const secrets = await call(client, "vault_list", { primitive: "keys" });
    expect(secrets.isError).toBe(false);
    expect(secrets.data.data.map((x: { name: string }) => x.name)).toEqual(["API_KEY", "OTHER"]);
    expect(secrets.data.data[0]).toMatchObject({
      name: "API_KEY",
      version: 1,
      grant: { hosts: ["127.0.0.1"], methods: null, expires_at: null },
    });
    expect(secrets.data.data[1]).toMatchObject({ name: "OTHER", grant: null });
    expect(secrets.text).not.toContain("other-value-123");
    const paged = await call(client, "vault_list", { primitive: "keys", action: "secrets", limit: 1 });
    expect(paged.data.data.map((x: { name: string }) => x.name)).toEqual(["API_KEY"]);
    expect(typeof paged.data.next_cursor).toBe("string");

    const grants = await call(client, "vault_list", { primitive: "keys", action: "grants" });
    expect(grants.isError).toBe(false);
    expect(grants.data.data).toEqual([
      expect.objectContaining({ name: "API_KEY", hosts: ["127.0.0.1"], methods: null, expires_at: null }),
    ]);
  });

  it("vault_use sends the secret as a bearer token; the result comes back redacted", async () => {
    const { s, client, echo } = await withVault();
    const res = await call(client, "vault_use", {
      primitive: "keys",
      url: `${echo.origin}/v1/things?q=1`,
      auth: { bearer: "API_KEY" },
      method: "POST",
      headers: { "x-trace": "t-1" },
      body: "hello upstream",
    });
    expect(res.isError, res.text).toBe(false);
    expect(res.data).toMatchObject({ status: 200, encoding: "utf8" });
    expect(res.data.headers["content-type"]).toBe("application/json");
    // The upstream received the real value.
    expect(echo.received).toHaveLength(1);
    expect(echo.received[0]).toMatchObject({ method: "POST", url: "/v1/things?q=1", body: "hello upstream" });
    expect(echo.received[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(echo.received[0]?.headers["x-trace"]).toBe("t-1");
    // The upstream echoed the value in its body and a header: both are redacted.
    const seen = JSON.parse(res.data.body);
    expect(seen.headers.authorization).toBe("Bearer [REDACTED:API_KEY]");
    expect(res.data.headers["x-echo-auth"]).toBe("Bearer [REDACTED:API_KEY]");

    const audit = await s.audit();
    const fetches = audit.filter((e) => e.action === "vault.fetch");
    expect(fetches).toHaveLength(1);
    expect(fetches[0]).toMatchObject({ actor: "local", target: "API_KEY" });
    expect(JSON.stringify(audit)).not.toContain(SECRET);
  });

  it("vault_use refuses hosts and secrets outside the grant, and unknown secrets", async () => {
    const { client, echo, admin } = await withVault();
    const ungranted = await call(client, "vault_use", {
      primitive: "keys",
      url: `${echo.origin}/`,
      auth: { bearer: "OTHER" },
    });
    expect(ungranted).toMatchObject({ isError: true, data: { error: { code: "secret_policy_denied" } } });
    const otherHost = await call(client, "vault_use", {
      primitive: "keys",
      url: echo.origin.replace("127.0.0.1", "localhost"),
      auth: { bearer: "API_KEY" },
    });
    expect(otherHost).toMatchObject({ isError: true, data: { error: { code: "secret_policy_denied" } } });
    const unknown = await call(client, "vault_use", {
      primitive: "keys",
      url: `${echo.origin}/`,
      auth: { bearer: "NOPE" },
    });
    expect(unknown).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
    const extra = await call(client, "vault_use", {
      primitive: "keys",
      url: `${echo.origin}/`,
      auth: { bearer: "API_KEY", header: "x-api-key" },
    });
    expect(extra).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    const noAuth = await call(client, "vault_use", { primitive: "keys", url: `${echo.origin}/`, auth: {} });
    expect(noAuth).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    expect(echo.received).toEqual([]);

    // Granting (an account's REST call) is what opens the door.
    expect(
      await admin("vault.grant", { name: "OTHER", allow: { hosts: ["127.0.0.1"], methods: ["GET"] } }),
    ).toMatchObject({ name: "OTHER" });
    const now = await call(client, "vault_use", {
      primitive: "keys",
      url: `${echo.origin}/`,
      auth: { bearer: "OTHER" },
    });
    expect(now.data.status).toBe(200);
    const post = await call(client, "vault_use", {
      primitive: "keys",
      url: `${echo.origin}/`,
      auth: { bearer: "OTHER" },
      method: "POST",
    });
    expect(post).toMatchObject({ isError: true, data: { error: { code: "secret_policy_denied" } } });
  });

  it("secrets cannot be written through MCP: no tool takes a value (vault_request_secret asks a person)", async () => {
    const { s, client } = await withVault(false);
    const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith("vault_"));
    expect(tools.map((t) => t.name).sort()).toEqual(["vault_list", "vault_request_secret", "vault_use"]);
    for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain("value");
    const res = await s.call(client, "vault_list", { primitive: "keys", value: "x" });
    expect(res).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
  });
});
