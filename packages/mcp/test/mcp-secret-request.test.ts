// vault_request_secret end to end (issue 40, item 6): the official SDK client declares URL-mode
// elicitation; its handler accepts and, like a person in a browser, opens the elicited URL (the
// local engine's page, over real HTTP) and submits the form. The value goes into the vault, the
// tool resolves `set: true`, vault_use can send it, and the value is nowhere in a tool result or
// the audit trail. Also: a client without the capability gets the URL in an error; decline,
// expiry, a second answer and the page's defences (escaping, form token, cross-site).

import { expect, it } from "vitest";
import { forEachInvoker, inProcessOnly } from "./helpers.js";
import {
  ask,
  echoServer,
  formToken,
  post,
  SECRET_REQUEST_TTL_MS,
  setsValue,
  setup,
  submitPage,
  VALUE,
} from "./secret-request-helpers.js";

forEachInvoker("MCP: vault_request_secret", () => {
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

  it("needs the tool: a session narrowed without it is refused, one with it asks", async () => {
    const t = await setup();
    const without = await t.s.connect("g", "?tools=vault_list,vault_use");
    const refused = await t.s.call(without, "vault_request_secret", { primitive: "keys", ...ask });
    expect(refused).toMatchObject({ isError: true, data: { error: { code: "tool_not_allowed" } } });
    const narrowed = await t.elicitingClient("accept", setsValue);
    expect((await narrowed.call(ask)).data).toMatchObject({ set: true });
  });
});

// What needs the engine in this process (its clock, REST routes or local auth): once.
inProcessOnly("MCP: vault_request_secret", () => {
  it("expires: a waiting call answers expired and the page no longer sets it", async () => {
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
});
