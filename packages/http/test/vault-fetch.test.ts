import { describe, expect, it } from "vitest";
import { SECRET, withGrantedSecret, withVault } from "./vault-helpers.js";

const MARK = "[REDACTED:API_KEY]";

describe("vault: fetch", () => {
  it("injects a bearer secret; the upstream gets the value, the caller sees it redacted", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const res = await fetch({ url: `${echo.origin}/echo?q=1`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["body", "encoding", "headers", "status"]);
    expect(res.body).toMatchObject({ status: 200, encoding: "utf8" });
    expect(res.body.headers["content-type"]).toBe("application/json");
    expect(echo.received).toHaveLength(1);
    expect(echo.received[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(echo.received[0]?.headers.host).toBe(`${echo.host}:${echo.port}`);
    const seen = JSON.parse(res.body.body);
    expect(seen).toMatchObject({ method: "GET", url: "/echo?q=1" });
    expect(seen.headers.authorization).toBe(`Bearer ${MARK}`);
  });

  it("injects into a named header or a query parameter", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const header = await fetch({ url: `${echo.origin}/echo`, auth: { header: "X-Api-Key", secret: "API_KEY" } });
    expect(header.status).toBe(200);
    expect(echo.received[0]?.headers["x-api-key"]).toBe(SECRET);
    expect(echo.received[0]?.headers.authorization).toBeUndefined();
    expect(JSON.parse(header.body.body).headers["x-api-key"]).toBe(MARK);
    const query = await fetch({ url: `${echo.origin}/echo?a=1&key=old`, auth: { query: "key", secret: "API_KEY" } });
    expect(query.status).toBe(200);
    const sent = new URL(echo.received[1]?.url ?? "", "http://x");
    expect(sent.searchParams.get("key")).toBe(SECRET);
    expect(sent.searchParams.get("a")).toBe("1");
    expect(JSON.parse(query.body.body).url).toContain(`key=${MARK}`);
  });

  it("sends the method, the caller's headers and a string or JSON body", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const json = await fetch({
      url: `${echo.origin}/echo`,
      auth: { bearer: "API_KEY" },
      method: "post",
      headers: { "X-Trace": "t-1", Accept: "application/json" },
      body: { hello: "world" },
    });
    expect(json.status).toBe(200);
    expect(echo.received[0]).toMatchObject({ method: "POST", body: '{"hello":"world"}' });
    expect(echo.received[0]?.headers).toMatchObject({
      "x-trace": "t-1",
      accept: "application/json",
      "content-type": "application/json",
    });
    await fetch({
      url: `${echo.origin}/echo`,
      auth: { bearer: "API_KEY" },
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "plain text",
    });
    expect(echo.received[1]).toMatchObject({ method: "PUT", body: "plain text" });
    expect(echo.received[1]?.headers["content-type"]).toBe("text/plain");
  });

  it("returns the upstream status as is (an upstream error is not a fetch error)", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const res = await fetch({ url: `${echo.origin}/status?code=503`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 503, body: "status 503" });
  });

  it("refuses malformed requests with 400 before anything is sent", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const cases: [Record<string, unknown>, string][] = [
      [{ url: "ftp://127.0.0.1/x", auth: { bearer: "API_KEY" } }, "url"],
      [{ url: "file:///etc/passwd", auth: { bearer: "API_KEY" } }, "url"],
      [{ url: "/relative", auth: { bearer: "API_KEY" } }, "url"],
      [{ url: `http://u:p@${echo.host}:${echo.port}/echo`, auth: { bearer: "API_KEY" } }, "url"],
      [{ url: `${echo.origin}/echo`, auth: { bearer: "api_key" } }, "auth"],
      [{ url: `${echo.origin}/echo`, auth: { cookie: "API_KEY" } }, "auth"],
      [{ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" }, method: "TRACE" }, "method"],
      [{ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" }, body: "x" }, "body"],
      [{ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" }, timeout: "31s" }, "timeout"],
      [{ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" }, follow: false }, "follow"],
    ];
    for (const header of ["Authorization", "Host", "Content-Length", "Accept-Encoding", "Range", "Proxy-Foo"]) {
      cases.push([{ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" }, headers: { [header]: "x" } }, header]);
    }
    cases.push([
      {
        url: `${echo.origin}/echo`,
        auth: { header: "X-Api-Key", secret: "API_KEY" },
        headers: { "x-api-key": "mine" },
      },
      "x-api-key",
    ]);
    cases.push([
      { url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" }, headers: { "X-A": "a\r\nInjected: 1" } },
      "X-A",
    ]);
    // Nor may the secret itself go into a header the engine owns.
    for (const header of ["Host", "Content-Length", "Transfer-Encoding", "Proxy-Authorization"]) {
      cases.push([{ url: `${echo.origin}/echo`, auth: { header, secret: "API_KEY" } }, "auth.header"]);
    }
    for (const [body, field] of cases) {
      const res = await fetch(body);
      expect(res.status, field).toBe(400);
      expect(res.body.error.code, field).toBe("invalid_request");
      expect(res.body.error.message, field).toContain(field);
    }
    expect(echo.received).toEqual([]);
  });

  it("answers 404 for a missing secret and 403 secret_policy_denied without a grant", async () => {
    const server = await withVault();
    const missing = await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "NOPE" } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    await server.put("API_KEY", SECRET);
    const ungranted = await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(ungranted.status).toBe(403);
    expect(ungranted.body.error.code).toBe("secret_policy_denied");
    await server.grant({ name: "API_KEY", allow: { hosts: [server.echo.host] } });
    expect((await server.api("DELETE", `${server.base}/grants/API_KEY`)).status).toBe(204);
    const revoked = await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(revoked.status).toBe(403);
    expect(revoked.body.error.code).toBe("secret_policy_denied");
    expect(server.echo.received).toEqual([]);
  });

  it("refuses hosts, ports and methods outside the grant", async () => {
    const { fetch, grant, echo } = await withGrantedSecret({}, { methods: ["GET"] });
    const denials = [
      { url: `${echo.origin}/echo`, method: "POST", body: "x" },
      { url: `${echo.origin}/echo`, method: "DELETE" },
      { url: `http://localhost:${echo.port}/echo` },
      { url: "http://api.example.com/echo" },
    ];
    for (const body of denials) {
      const res = await fetch({ ...body, auth: { bearer: "API_KEY" } });
      expect(res.status, body.url).toBe(403);
      expect(res.body.error.code).toBe("secret_policy_denied");
    }
    await grant({ name: "API_KEY", allow: { hosts: [`${echo.host}:${echo.port + 1}`] } });
    const wrongPort = await fetch({ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(wrongPort.status).toBe(403);
    expect(wrongPort.body.error.message).toContain("does not allow host");
    expect(echo.received).toEqual([]);
    await grant({ name: "API_KEY", allow: { hosts: [`${echo.host}:${echo.port}`] } });
    expect((await fetch({ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" } })).status).toBe(200);
  });

  it("matches '*.' patterns on subdomains only, never the apex or look-alikes", async () => {
    const { fetch, grant, put } = await withVault();
    await put("API_KEY", SECRET);
    await grant({ name: "API_KEY", allow: { hosts: ["*.example.com"] } });
    for (const url of [
      "http://example.com/",
      "http://badexample.com/",
      "http://example.com.evil.test/",
      "http://api.example.com.evil.test/",
      "http://api.example.net/",
    ]) {
      const res = await fetch({ url, auth: { bearer: "API_KEY" } });
      expect(res.status, url).toBe(403);
      expect(res.body.error.message, url).toContain("does not allow host");
    }
  });

  it("answers 410 secret_grant_expired once the grant's ttl has passed on the engine clock", async () => {
    const { fetch, grant, clock, echo, api, base } = await withGrantedSecret();
    await grant({ name: "API_KEY", allow: { hosts: [echo.host] }, ttl: "1m" });
    clock.advance(59_999);
    expect((await fetch({ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" } })).status).toBe(200);
    clock.advance(1);
    const expired = await fetch({ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe("secret_grant_expired");
    expect(echo.received).toHaveLength(1);
    // The expired grant is still listed (with its expiry) until replaced or revoked.
    expect((await api("GET", `${base}/grants`)).body.data[0].expires_at).toBe(clock.now());
    await grant({ name: "API_KEY", allow: { hosts: [echo.host] } });
    expect((await fetch({ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" } })).status).toBe(200);
  });

  it("answers 502 upstream_error for a timeout, an oversized body and a refused connection", async () => {
    const { fetch, echo, grant } = await withGrantedSecret();
    const slow = await fetch({ url: `${echo.origin}/slow`, auth: { bearer: "API_KEY" }, timeout: "300ms" });
    expect(slow.status).toBe(502);
    expect(slow.body.error).toEqual({ code: "upstream_error", message: "upstream request timed out after 300 ms" });
    const huge = await fetch({ url: `${echo.origin}/huge`, auth: { bearer: "API_KEY" } });
    expect(huge.status).toBe(502);
    expect(huge.body.error.message).toContain("larger than 1048576 bytes");
    await grant({ name: "API_KEY", allow: { hosts: ["127.0.0.1"] } });
    const refused = await fetch({ url: "http://127.0.0.1:1/", auth: { bearer: "API_KEY" } });
    expect(refused.status).toBe(502);
    expect(refused.body.error.message).toBe("upstream request to '127.0.0.1' failed (ECONNREFUSED)");
  });

  it("audits fetches with the secret name, host, method and status only", async () => {
    const { fetch, echo, engine, vault } = await withGrantedSecret();
    await fetch({ url: `${echo.origin}/status?code=201`, auth: { bearer: "API_KEY" }, method: "POST", body: SECRET });
    await fetch({ url: "http://api.example.com/", auth: { bearer: "API_KEY" } });
    await engine.services.audit.flush();
    const entries = await engine.services.catalog.listAudit({ primitive: vault.id, action: "vault.fetch", limit: 10 });
    expect(entries.map((e) => [e.target, e.detail])).toEqual([
      ["API_KEY", { secret: "API_KEY", host: "api.example.com", method: "GET", error: "secret_policy_denied" }],
      ["API_KEY", { secret: "API_KEY", host: echo.host, method: "POST", status: 201 }],
    ]);
  });
});
