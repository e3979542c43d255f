import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { startServer } from "./helpers.js";

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
    const ok = await api("POST", "/v1/groups", { name: "app" }, { authorization: "Bearer s3cret-token" });
    expect(ok.status).toBe(201);
    expect((await api("GET", "/health")).status).toBe(200);
    await engine.services.audit.flush();
    const [entry] = await engine.services.catalog.listAudit({ limit: 1 });
    expect(entry).toMatchObject({ action: "group.create", actor: "key:root" });
  });

  it("audits tokenless calls with actor local", async () => {
    const { api, engine } = await startServer();
    await api("POST", "/v1/groups", { name: "app" });
    await engine.services.audit.flush();
    expect((await engine.services.catalog.listAudit({ limit: 1 }))[0]?.actor).toBe("local");
  });
});
