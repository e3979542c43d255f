import { request } from "node:http";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { localAuthenticator } from "../src/index.js";

/** node:http, because fetch does not let a caller choose the Host header. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "GET", headers }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("local auth", () => {
  it("answers requests addressed to localhost, 127.0.0.1 and [::1]", async () => {
    const { url } = await startServer();
    const port = new URL(url).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "localhost"]) {
      expect((await rawGet(`${url}/v1/groups`, { host })).status).toBe(200);
    }
  });

  it("refuses requests addressed to another host (DNS rebinding) with 403 forbidden", async () => {
    const { url } = await startServer();
    for (const host of ["evil.example:7777", "attacker.com", "localhost.evil.com", "127.0.0.2"]) {
      const res = await rawGet(`${url}/v1/groups`, { host });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
  });

  it("refuses cross-site browser requests and allows local origins", async () => {
    const { api } = await startServer();
    const evil = await api("GET", "/v1/groups", undefined, { origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(evil.body.error.code).toBe("forbidden");
    expect((await api("GET", "/v1/groups", undefined, { origin: "null" })).status).toBe(403);
    expect((await api("POST", "/v1/groups", { name: "x" }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await api("GET", "/v1/groups")).body.data).toEqual([]); // nothing was created
    expect((await api("GET", "/v1/groups", undefined, { origin: "http://localhost:3000" })).status).toBe(200);
    expect((await api("GET", "/v1/groups", undefined, { "sec-fetch-site": "same-origin" })).status).toBe(200);
  });

  it("with a root token, requires it as Bearer (401 invalid_token otherwise)", async () => {
    const { api, engine } = await startServer({ rootToken: "s3cret-token" });
    const none = await api("GET", "/v1/groups");
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("invalid_token");
    expect((await api("GET", "/v1/groups", undefined, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await api("GET", "/v1/groups", undefined, { authorization: "Basic s3cret-token" })).status).toBe(401);
    expect((await api("GET", "/v1/groups", undefined, { authorization: "Bearer s3cret-token x" })).status).toBe(401);
    const ok = await api("POST", "/v1/groups", { name: "app" }, { authorization: "Bearer s3cret-token" });
    expect(ok.status).toBe(201);
    // The scheme in any case, spaces after it (RFC 6750, RFC 7235: @prim/wire's bearerToken).
    expect((await api("GET", "/v1/groups", undefined, { authorization: "bearer   s3cret-token" })).status).toBe(200);
    expect((await api("GET", "/health")).status).toBe(200);
    await engine.services.audit.flush();
    const [entry] = await engine.services.catalog.listAudit({ limit: 1 });
    expect(entry).toMatchObject({ action: "group.create", actor: "key:root" });
  });

  it("refuses at start a root token no Bearer header can carry", () => {
    expect(() => localAuthenticator({ rootToken: "two words" })).toThrow(/token68/);
    expect(() => localAuthenticator({ rootToken: "s3cret!" })).toThrow(/token68/);
    expect(localAuthenticator({ rootToken: "s3cret-token/+==" })).toBeTypeOf("function");
  });

  it("audits tokenless calls with actor local", async () => {
    const { api, engine } = await startServer();
    await api("POST", "/v1/groups", { name: "app" });
    await engine.services.audit.flush();
    expect((await engine.services.catalog.listAudit({ limit: 1 }))[0]?.actor).toBe("local");
  });
});

describe("local auth matches the path, not the URL", () => {
  it("/health needs no token whatever its query string; other paths still do", async () => {
    const { api } = await startServer({ rootToken: "tok-health" });
    for (const path of ["/health", "/health?x=1", "/health?", "/health?a=b&c=%2Fd"]) {
      const res = await api("GET", path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, version: expect.any(String) });
    }
    // A query naming /health does not exempt another path, nor does an odd spelling of it.
    for (const path of ["/v1/groups?/health", "/v1/groups?x=/health", "/%68ealth", "/health/"]) {
      expect((await api("GET", path)).status).toBe(401);
    }
  });

  it("the signed-URL exemption is decided on the path: a query cannot grant it", async () => {
    const { api } = await startServer({ rootToken: "tok-signed" });
    const sneaky = await api("GET", "/v1/groups?/v1/signed/x");
    expect(sneaky.status).toBe(401);
    expect(sneaky.body.error.code).toBe("invalid_token");
    // A signed path needs no token (a bad token is the signed route's own 403).
    const signed = await api("GET", "/v1/signed/not-a-token?x=1");
    expect(signed.status).toBe(403);
    expect(signed.body.error.code).toBe("forbidden");
    expect(signed.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("refuses a request with two Host headers (Node keeps the first; a proxy may keep another)", async () => {
    const { url } = await startServer();
    const { hostname, port } = new URL(url);
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      // rawHeaders as an array lets node:http send Host twice.
      const req = request(
        { hostname, port, path: "/v1/groups", method: "GET", headers: ["Host", "localhost", "Host", "evil.example"] },
        (r) => {
          let text = "";
          r.on("data", (c) => (text += c));
          r.on("end", () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
  });
});
