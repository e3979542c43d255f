// Shared by the vault_request_secret tests (mcp-secret-request*.test.ts): a server with a vault
// `keys` in group `g`, SDK clients declaring URL elicitation whose handler acts as the person,
// and the local page's form submitted over real HTTP like a browser would.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitRequestURLParams,
} from "@modelcontextprotocol/sdk/types.js";
import { LOCAL_PRINCIPAL } from "@prim/engine";
import { afterEach, expect } from "vitest";
import { startMcpServer } from "./helpers.js";

export const VALUE = `sk-elicited-${randomBytes(12).toString("hex")}`;
export const SECRET_REQUEST_TTL_MS = 15 * 60_000;

export const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

type Answer = "accept" | "decline" | "cancel";
type Person = (url: string) => Promise<unknown>;

/** An HTTP server on 127.0.0.1 answering with the Authorization header it received. */
export async function echoServer() {
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
export async function formToken(url: string): Promise<string> {
  const html = await (await fetch(url)).text();
  return /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? "";
}

/** Posts the page's form with `fields` (a form loaded earlier: `token`). */
export async function post(
  url: string,
  token: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ form_token: token, ...fields }),
  });
  return { status: res.status, html: await res.text() };
}

/** What a person's browser does: GET the page, then POST its form with `fields`. */
export async function submitPage(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return post(url, await formToken(url), fields, headers);
}

/** The person sets VALUE on the page. */
export const setsValue: Person = (url) => submitPage(url, { action: "set", value: VALUE });

export async function setup(query = "") {
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

export const ask = {
  name: "PAYMENTS_KEY",
  reason: "To charge the order in the checkout flow.",
  allow: { hosts: ["127.0.0.1"], methods: ["GET"] },
};
