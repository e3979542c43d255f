import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";

/** The secret value limit, stated here rather than imported: a change to it must show up in a test. */
const MAX_SECRET_BYTES = 65_536;

import { describe, expect, it } from "vitest";
import { SECRET, withVault } from "./vault-helpers.js";

const SECRET_FIELDS = ["created_at", "grant", "name", "needs_value", "updated_at", "version"];

describe("vault: secrets", () => {
  it("stores a secret and answers its name and version, never the value", async () => {
    const { put, clock } = await withVault();
    const first = await put("API_KEY", SECRET);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ name: "API_KEY", version: 1, created_at: clock.now(), updated_at: clock.now() });
    clock.advance(5000);
    const second = await put("API_KEY", `${SECRET}-rotated`);
    expect(second.body).toEqual({
      name: "API_KEY",
      version: 2,
      created_at: first.body.created_at,
      updated_at: first.body.created_at + 5000,
    });
  });

  it("lists names, versions and grants without values, paged by name", async () => {
    const { put, grant, api, base } = await withVault();
    for (const name of ["C_KEY", "A_KEY", "B_KEY"]) expect((await put(name, SECRET)).status).toBe(200);
    await put("B_KEY", SECRET);
    expect((await grant({ name: "B_KEY", allow: { hosts: ["api.example.com"], methods: ["GET"] } })).status).toBe(201);
    const page1 = await api("GET", `${base}/secrets?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((s: { name: string }) => s.name)).toEqual(["A_KEY", "B_KEY"]);
    for (const entry of page1.body.data) expect(Object.keys(entry).sort()).toEqual(SECRET_FIELDS);
    expect(page1.body.data[0]).toMatchObject({ version: 1, grant: null, needs_value: false });
    expect(page1.body.data[1]).toMatchObject({
      version: 2,
      grant: { hosts: ["api.example.com"], methods: ["GET"], expires_at: null },
    });
    const page2 = await api("GET", `${base}/secrets?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body).toMatchObject({ data: [{ name: "C_KEY" }], next_cursor: null });
    expect((await api("GET", `${base}/secrets?limit=201`)).status).toBe(400);
    expect((await api("GET", `${base}/secrets?cursor=nope`)).status).toBe(400);
  });

  it("accepts names of A-Z, 0-9 and _ starting with a letter, up to 63 characters", async () => {
    const { put } = await withVault();
    for (const name of ["A", "OPENAI_API_KEY", "K2", `A${"B".repeat(62)}`]) {
      expect((await put(name, "v")).status, name).toBe(200);
    }
    for (const name of ["api_key", "1KEY", "_KEY", "KEY-1", "KEY.1", `A${"B".repeat(63)}`, "K%C3%89Y"]) {
      const res = await put(name, "v");
      expect(res.status, name).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toContain("name");
    }
  });

  it("answers 413 for a value over 64 KiB, 400 for an empty or non-string value", async () => {
    const { put, api, base } = await withVault();
    expect((await put("BIG", "x".repeat(MAX_SECRET_BYTES))).status).toBe(200);
    const big = await put("BIG", "é".repeat(MAX_SECRET_BYTES / 2 + 1));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("payload_too_large");
    expect(big.body.error.message).not.toContain("é");
    for (const value of ["", 42, null, { nested: SECRET }]) {
      const res = await put("BAD", value);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    const unknown = await api("PUT", `${base}/secrets/BAD`, { value: SECRET, ttl: "1h" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("ttl");
    // A malformed body carrying the value: the parser's message must not quote it back.
    const broken = await api("PUT", `${base}/secrets/BAD`, `{"value": ${SECRET}}`);
    expect(broken.status).toBe(400);
    expect(broken.body.error.message).toContain("JSON");
  });

  it("deletes a secret with its grant; a second delete is 404", async () => {
    const { put, grant, api, base } = await withVault();
    await put("API_KEY", SECRET);
    await put("API_KEY", SECRET);
    expect((await grant({ name: "API_KEY", allow: { hosts: ["api.example.com"] } })).status).toBe(201);
    expect((await api("DELETE", `${base}/secrets/API_KEY`)).status).toBe(204);
    const again = await api("DELETE", `${base}/secrets/API_KEY`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
    expect((await api("GET", `${base}/grants`)).body).toEqual({ data: [], next_cursor: null });
    expect((await api("DELETE", `${base}/grants/API_KEY`)).status).toBe(404);
    // Stored again, it starts over: version 1 and no grant.
    expect((await put("API_KEY", SECRET)).body.version).toBe(1);
    expect((await api("GET", `${base}/secrets`)).body.data).toMatchObject([{ name: "API_KEY", grant: null }]);
  });

  it("counts secrets as stats items; export stays 400 wrong_type", async () => {
    const { put, grant, api, base } = await withVault();
    await put("A_KEY", SECRET);
    await put("B_KEY", SECRET);
    await grant({ name: "A_KEY", allow: { hosts: ["api.example.com"] } });
    const stats = await api("GET", `${base}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ type: "vault", items: 2, paused: false });
    expect(stats.body.size_bytes).toBeGreaterThan(0);
    const exported = await api("GET", `${base}/export`);
    expect(exported.status).toBe(400);
    expect(exported.body.error.code).toBe("wrong_type");
  });

  it("answers 400 wrong_type for vault routes on another type, and kv routes on a vault", async () => {
    const server = await withVault();
    const kv = await server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
      name: "cache",
      type: "kv",
      group: "app",
    });
    const res = await server.api("PUT", `/v1/primitives/${kv.id}/secrets/API_KEY`, { value: SECRET });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("wrong_type");
    expect((await server.api("GET", `${server.base}/keys`)).body.error.code).toBe("wrong_type");
  });

  it("answers 423 paused to every vault route of a paused vault", async () => {
    const { put, api, base, vault, fetch, echo } = await withVault();
    await put("API_KEY", SECRET);
    expect((await api("POST", `/v1/primitives/${vault.id}/pause`)).status).toBe(200);
    for (const res of [
      await put("API_KEY", SECRET),
      await api("GET", `${base}/secrets`),
      await api("GET", `${base}/grants`),
      await fetch({ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" } }),
    ]) {
      expect(res.status).toBe(423);
      expect(res.body.error.code).toBe("paused");
    }
  });
});
