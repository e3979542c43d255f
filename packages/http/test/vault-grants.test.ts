import { describe, expect, it } from "vitest";
import { SECRET, withVault } from "./vault-helpers.js";

describe("vault: grants", () => {
  it("creates a grant (201) and replaces it on a second POST", async () => {
    const { put, grant, api, base, clock } = await withVault();
    await put("API_KEY", SECRET);
    const first = await grant({ name: "API_KEY", allow: { hosts: ["api.example.com"] } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      name: "API_KEY",
      hosts: ["api.example.com"],
      methods: null,
      expires_at: null,
      created_at: clock.now(),
    });
    clock.advance(1000);
    const second = await grant({
      name: "API_KEY",
      allow: { hosts: ["*.example.org"], methods: ["post", "GET"] },
      ttl: "1h",
    });
    expect(second.status).toBe(201);
    expect(second.body).toEqual({
      name: "API_KEY",
      hosts: ["*.example.org"],
      methods: ["POST", "GET"],
      expires_at: clock.now() + 3_600_000,
      created_at: clock.now(),
    });
    expect((await api("GET", `${base}/grants`)).body).toEqual({ data: [second.body], next_cursor: null });
  });

  it("answers 404 for a grant of a missing secret", async () => {
    const { grant } = await withVault();
    const res = await grant({ name: "NOPE", allow: { hosts: ["api.example.com"] } });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: "not_found", message: "secret 'NOPE' not found" });
  });

  it("keeps host patterns in canonical form, without duplicates", async () => {
    const { put, grant } = await withVault();
    await put("API_KEY", SECRET);
    const res = await grant({
      name: "API_KEY",
      allow: {
        hosts: [
          "API.Example.COM.",
          "api.example.com",
          "*.Example.net",
          "example.com:8443",
          "[::1]",
          "[2001:DB8::1]:443",
          "2130706433",
          "bücher.de",
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.hosts).toEqual([
      "api.example.com",
      "*.example.net",
      "example.com:8443",
      "[::1]",
      "[2001:db8::1]:443",
      "127.0.0.1",
      "xn--bcher-kva.de",
    ]);
  });

  it("refuses malformed host patterns with 400 naming the entry", async () => {
    const { put, grant } = await withVault();
    await put("API_KEY", SECRET);
    for (const host of [
      "",
      "http://api.example.com",
      "api.example.com/path",
      "user@api.example.com",
      "*",
      "*.com",
      "api.*.example.com",
      "*.192.168.1.1",
      "::1",
      "api.example.com:0",
      "api.example.com:99999",
      "api.example.com:https",
      "exa mple.com",
    ]) {
      const res = await grant({ name: "API_KEY", allow: { hosts: ["ok.example.com", host] } });
      expect(res.status, host).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message, host).toContain("allow.hosts[1]");
    }
  });

  it("refuses empty host and method lists, unknown methods, bad ttls and unknown fields", async () => {
    const { put, grant } = await withVault();
    await put("API_KEY", SECRET);
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "API_KEY", allow: { hosts: [] } }, "allow.hosts"],
      [{ name: "API_KEY", allow: { hosts: ["a.example.com"], methods: [] } }, "allow.methods"],
      [{ name: "API_KEY", allow: { hosts: ["a.example.com"], methods: ["FETCH"] } }, "allow.methods[0]"],
      [{ name: "API_KEY", allow: { hosts: ["a.example.com"] }, ttl: "soon" }, "ttl"],
      [{ name: "API_KEY", allow: { hosts: ["a.example.com"] }, ttl: 60 }, "ttl"],
      [{ name: "API_KEY", allow: { hosts: ["a.example.com"], ports: [443] } }, "allow.ports"],
      [{ name: "API_KEY", hosts: ["a.example.com"] }, "hosts"],
      [{ name: "api_key", allow: { hosts: ["a.example.com"] } }, "name"],
      [{ name: "API_KEY", allow: { hosts: new Array(101).fill("a.example.com") } }, "allow.hosts"],
    ];
    for (const [body, field] of cases) {
      const res = await grant(body);
      expect(res.status, field).toBe(400);
      expect(res.body.error.message, field).toContain(field);
    }
  });

  it("lists grants paged by name and revokes them (204, then 404)", async () => {
    const { put, grant, api, base } = await withVault();
    for (const name of ["C_KEY", "A_KEY", "B_KEY"]) {
      await put(name, SECRET);
      await grant({ name, allow: { hosts: [`${name.toLowerCase().replace("_", "-")}.example.com`] } });
    }
    const page1 = await api("GET", `${base}/grants?limit=2`);
    expect(page1.body.data.map((g: { name: string }) => g.name)).toEqual(["A_KEY", "B_KEY"]);
    expect(page1.body.data[0].hosts).toEqual(["a-key.example.com"]);
    const page2 = await api("GET", `${base}/grants?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body).toMatchObject({ data: [{ name: "C_KEY" }], next_cursor: null });
    expect((await api("DELETE", `${base}/grants/B_KEY`)).status).toBe(204);
    const again = await api("DELETE", `${base}/grants/B_KEY`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
    expect((await api("GET", `${base}/grants`)).body.data.map((g: { name: string }) => g.name)).toEqual([
      "A_KEY",
      "C_KEY",
    ]);
    // The secret itself stays; only its grant is gone.
    const secrets = (await api("GET", `${base}/secrets`)).body.data;
    expect(secrets.find((s: { name: string }) => s.name === "B_KEY")).toMatchObject({ grant: null });
  });

  it("audits grant changes with the hosts and methods, never the value", async () => {
    const { put, grant, api, base, engine, vault } = await withVault();
    await put("API_KEY", SECRET);
    await grant({ name: "API_KEY", allow: { hosts: ["api.example.com"], methods: ["GET"] }, ttl: "5m" });
    await api("DELETE", `${base}/grants/API_KEY`);
    await api("DELETE", `${base}/secrets/API_KEY`);
    await engine.services.audit.flush();
    const entries = await engine.services.catalog.listAudit({ primitive: vault.id, limit: 100 });
    const byAction = Object.fromEntries(entries.map((e) => [e.action, e]));
    expect(byAction["vault.put"]).toMatchObject({ target: "API_KEY", detail: { version: 1 } });
    expect(byAction["vault.grant"]).toMatchObject({
      target: "API_KEY",
      detail: { hosts: ["api.example.com"], methods: ["GET"] },
    });
    expect(byAction["vault.revoke"]).toMatchObject({ target: "API_KEY" });
    expect(byAction["vault.delete"]).toMatchObject({ target: "API_KEY" });
  });
});
