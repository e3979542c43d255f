// Secret requests (issue 40, item 6) at the engine: an agent with `vault_request_secret` asks, a
// person with the right to store secrets answers once with the value (stored with the proposed
// grant) or declines; a request expires after 15 minutes; waits end on the answer or the expiry.
// The value never appears in a result or an audit entry.
import type { AuditEntry, Page, Principal, SecretListing, SecretRequest } from "@prim/wire";
import { LOCAL_PRINCIPAL } from "@prim/wire";
import { describe, expect, it } from "vitest";
import type { VaultHandle } from "../../src/primitives/vault/handle.js";
import { SECRET_REQUEST_TTL_MS } from "../../src/primitives/vault/requests.js";
import { testEngine } from "../helpers.js";

const VALUE = "sk-live-4f1d9c0b7e2a4e8f";

/** A key of the group `app` allowed only `tools`. */
const agent = (groupId: string, tools: string[], readOnly = false): Principal => ({
  kind: "scoped",
  workspace: "local",
  actor: "key:agent",
  groupId,
  tools,
  ...(readOnly ? { readOnly } : {}),
});

async function setup() {
  const { engine, clock } = testEngine();
  const group = await engine.invoke<{ id: string }>(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  const vault = await engine.invoke<{ id: string }>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name: "keys",
    type: "vault",
    group: "app",
  });
  const asker = agent(group.id, ["vault_request_secret"]);
  const ask = (input: Record<string, unknown> = {}) =>
    engine.invoke<SecretRequest>(asker, "vault.request", vault.id, {
      name: "OPENAI_API_KEY",
      reason: "To call the embeddings API for the nightly job.",
      ...input,
    });
  const get = (request: string, wait = 0) =>
    engine.invoke<SecretRequest>(asker, "vault.request_get", vault.id, { request, wait });
  const fulfil = (request: string, who: Principal = LOCAL_PRINCIPAL, value = VALUE) =>
    engine.invoke<SecretRequest>(who, "vault.request_fulfil", vault.id, { request, value });
  const audit = async () => {
    await engine.services.audit.flush();
    return (await engine.invoke<Page<AuditEntry>>(LOCAL_PRINCIPAL, "audit.list", null, { limit: 200 })).data;
  };
  /** Calls parked on a request (waited for instead of sleeping). */
  const waiting = (request: string) =>
    (engine.services.files.handle(vault.id, "vault").store as VaultHandle).requests.waiting(request);
  return { engine, clock, group, vault, asker, ask, get, fulfil, audit, waiting };
}

describe("vault secret requests", () => {
  it("an agent asks, a person sets the value once with the proposed grant; nothing returns the value", async () => {
    const t = await setup();
    const asked = await t.ask({ allow: { hosts: ["API.openai.com"], methods: ["post"] } });
    expect(asked).toMatchObject({
      name: "OPENAI_API_KEY",
      status: "pending",
      requested_by: "key:agent",
      allow: { hosts: ["api.openai.com"], methods: ["POST"] },
      expires_at: asked.created_at + SECRET_REQUEST_TTL_MS,
      answered_at: null,
      version: null,
    });
    expect(asked.id).toMatch(/^sreq_[A-Za-z0-9_-]{22}$/);

    // A wait parked on the request ends with the answer.
    const waiting = t.get(asked.id, 30_000);
    await expect.poll(() => t.waiting(asked.id)).toBe(1);
    const set = await t.fulfil(asked.id);
    expect(set).toMatchObject({ status: "set", answered_by: "local", version: 1 });
    expect(await waiting).toMatchObject({ status: "set", version: 1 });

    const secrets = await t.engine.invoke<Page<SecretListing>>(LOCAL_PRINCIPAL, "vault.list", t.vault.id, {});
    expect(secrets.data).toMatchObject([
      { name: "OPENAI_API_KEY", version: 1, grant: { hosts: ["api.openai.com"], methods: ["POST"], expires_at: null } },
    ]);

    // Answered once: a second answer (set or decline) is 409, and the secret keeps its version.
    await expect(t.fulfil(asked.id, LOCAL_PRINCIPAL, "another-value")).rejects.toMatchObject({ code: "conflict" });
    await expect(
      t.engine.invoke(LOCAL_PRINCIPAL, "vault.request_decline", t.vault.id, { request: asked.id }),
    ).rejects.toMatchObject({ code: "conflict" });
    expect((await t.get(asked.id)).version).toBe(1);

    const entries = await t.audit();
    expect(entries.map((e) => e.action)).toEqual(
      expect.arrayContaining(["vault.request", "vault.request_fulfil", "vault.request_decline"]),
    );
    expect(JSON.stringify(entries)).not.toContain(VALUE);
    expect(JSON.stringify(entries)).not.toContain("another-value");
    expect(JSON.stringify([asked, set, await t.get(asked.id)])).not.toContain(VALUE);
  });

  it("answering needs an account: the asking agent (or any scoped key) is refused, the account succeeds", async () => {
    const t = await setup();
    const asked = await t.ask();
    const everyTool = agent(t.group.id, ["vault_*"]);
    await expect(t.fulfil(asked.id, t.asker)).rejects.toMatchObject({ code: "forbidden" });
    await expect(t.fulfil(asked.id, everyTool)).rejects.toMatchObject({ code: "forbidden" });
    await expect(
      t.engine.invoke(everyTool, "vault.request_decline", t.vault.id, { request: asked.id }),
    ).rejects.toMatchObject({ code: "forbidden" });
    expect(await t.fulfil(asked.id)).toMatchObject({ status: "set" });
  });

  it("asking needs the tool and a writing credential; the same ask succeeds with them", async () => {
    const t = await setup();
    const input = { name: "TOKEN", reason: "why" };
    await expect(
      t.engine.invoke(agent(t.group.id, ["vault_list", "vault_use"]), "vault.request", t.vault.id, input),
    ).rejects.toMatchObject({ code: "tool_not_allowed" });
    await expect(
      t.engine.invoke(agent(t.group.id, ["vault_request_secret"], true), "vault.request", t.vault.id, input),
    ).rejects.toMatchObject({ code: "forbidden" });
    expect(await t.engine.invoke(t.asker, "vault.request", t.vault.id, input)).toMatchObject({ status: "pending" });
  });

  it("a declined request stores nothing and cannot be set afterwards", async () => {
    const t = await setup();
    const asked = await t.ask();
    const declined = await t.engine.invoke<SecretRequest>(LOCAL_PRINCIPAL, "vault.request_decline", t.vault.id, {
      request: asked.id,
    });
    expect(declined).toMatchObject({ status: "declined", answered_by: "local", version: null });
    await expect(t.fulfil(asked.id)).rejects.toMatchObject({ code: "conflict" });
    const secrets = await t.engine.invoke<Page<SecretListing>>(LOCAL_PRINCIPAL, "vault.list", t.vault.id, {});
    expect(secrets.data).toEqual([]);
  });

  it("expires after 15 minutes: a parked wait ends, and the request can no longer be set", async () => {
    const t = await setup();
    const asked = await t.ask();
    const fresh = await t.ask({ name: "OTHER" });
    const waiting = t.get(asked.id, 30_000);
    await expect.poll(() => t.waiting(asked.id)).toBe(1);
    t.clock.advance(SECRET_REQUEST_TTL_MS);
    expect(await waiting).toMatchObject({ status: "expired" });
    await expect(t.fulfil(asked.id)).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining("expired"),
    });
    // One made later is still open.
    t.clock.set(fresh.created_at + SECRET_REQUEST_TTL_MS - 1);
    expect(await t.fulfil(fresh.id)).toMatchObject({ status: "set" });
  });

  it("validates the ask: secret names, a bounded reason without control characters, grant hosts", async () => {
    const t = await setup();
    for (const [input, field] of [
      [{ name: "lower" }, "name"],
      [{ reason: "" }, "reason"],
      [{ reason: "x".repeat(501) }, "reason"],
      [{ reason: "looks fine\u202eevil" }, "reason"],
      [{ reason: "bell\u0007" }, "reason"],
      [{ allow: { hosts: ["http://x/"] } }, "allow.hosts[0]"],
    ] as const) {
      await expect(t.ask(input), JSON.stringify(input)).rejects.toMatchObject({
        code: "invalid_request",
        message: expect.stringContaining(field),
      });
    }
    await expect(t.get("sreq_short")).rejects.toMatchObject({ code: "invalid_request" });
    await expect(t.get("sreq_AAAAAAAAAAAAAAAAAAAAAA")).rejects.toMatchObject({ code: "not_found" });
    expect(await t.ask({ reason: "two\nlines" })).toMatchObject({ reason: "two\nlines" });
  });

  it("lists the requests waiting for an answer (vault_list), oldest first; answered and expired ones drop out", async () => {
    const t = await setup();
    const a = await t.ask({ name: "FIRST" });
    t.clock.advance(1);
    const b = await t.ask({ name: "SECOND" });
    t.clock.advance(1);
    const c = await t.ask({ name: "THIRD" });
    const list = (who: Principal) =>
      t.engine.invoke<{ data: SecretRequest[] }>(who, "vault.requests", t.vault.id, {}).then((r) => r.data);
    // The asking key has only vault_request_secret: listing needs vault_list.
    await expect(list(t.asker)).rejects.toMatchObject({ code: "tool_not_allowed" });
    const lister = agent(t.group.id, ["vault_list"]);
    expect((await list(lister)).map((r) => r.name)).toEqual(["FIRST", "SECOND", "THIRD"]);
    await t.fulfil(a.id);
    await t.engine.invoke(LOCAL_PRINCIPAL, "vault.request_decline", t.vault.id, { request: b.id });
    expect(await list(LOCAL_PRINCIPAL)).toMatchObject([{ id: c.id, primitive: t.vault.id, status: "pending" }]);
    t.clock.advance(SECRET_REQUEST_TTL_MS);
    expect(await list(LOCAL_PRINCIPAL)).toEqual([]);
  });
});
