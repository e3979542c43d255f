import { LOCAL_PRINCIPAL, type Principal } from "@prim/engine";
import { startServer, withKv } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

describe("responses", () => {
  it("serves /health with the version", async () => {
    const { api } = await startServer();
    const res = await api("GET", "/health");
    expect(res.body).toEqual({ ok: true, version: expect.any(String) });
  });

  it("puts X-Request-Id on every response, keeping a sane one from the caller", async () => {
    const { api } = await startServer();
    for (const path of ["/health", "/v1/groups", "/v1/groups/missing", "/v1/nowhere"]) {
      const res = await api("GET", path);
      expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/);
    }
    const mine = await api("GET", "/v1/groups/missing", undefined, { "x-request-id": "trace-123" });
    expect(mine.headers.get("x-request-id")).toBe("trace-123");
    const odd = await api("GET", "/health", undefined, { "x-request-id": "a b <c>" });
    expect(odd.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("answers unknown routes and bad content types in the error shape", async () => {
    const { api } = await startServer();
    const missing = await api("GET", "/v1/nowhere");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const text = await api("POST", "/v1/groups", "name=x", { "content-type": "text/plain" });
    expect(text.status).toBe(400);
    expect(text.body.error).toEqual({ code: "invalid_request", message: expect.stringContaining("application/json") });
    const empty = await api("POST", "/v1/groups", "", { "content-type": "application/json" });
    expect(empty.body.error.message).toBe("name: required");
  });

  it("answers 413 for a body over the request limit", async () => {
    const { api, base } = await withKv();
    const res = await api("PUT", `${base}/keys/a`, { value: "x".repeat(17 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  it("serves an OpenAPI document generated from the routes", async () => {
    const { api } = await startServer();
    const doc = (await api("GET", "/v1/openapi.json")).body;
    expect(doc.openapi).toBe("3.1.0");
    const put = doc.paths["/v1/primitives/{id}/keys/{key}"].put;
    expect(put.requestBody.content["application/json"].schema.required).toEqual(["value"]);
    expect(Object.keys(put.requestBody.content["application/json"].schema.properties).sort()).toEqual([
      "encoding",
      "if_version",
      "ttl",
      "value",
    ]);
    const list = doc.paths["/v1/primitives/{id}/keys"].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      "cursor",
      "id",
      "limit",
      "prefix",
      "values",
    ]);
    for (const path of [
      "/v1/groups",
      "/v1/groups/{group}",
      "/v1/primitives",
      "/v1/primitives/{id}",
      "/v1/primitives/{id}/mset",
    ]) {
      expect(doc.paths[path]).toBeDefined();
    }
  });
});

describe("scoped credentials over REST", () => {
  async function scopedServer() {
    let scoped: Principal = LOCAL_PRINCIPAL;
    const server = await withKv({
      authenticate: (req) => (req.headers.authorization === "Bearer scoped" ? scoped : LOCAL_PRINCIPAL),
    });
    const group = (await server.api("GET", "/v1/groups/app")).body;
    await server.api("POST", "/v1/groups", { name: "other" });
    const other = (await server.api("POST", "/v1/primitives", { name: "x", type: "kv", group: "other" })).body;
    const as = (tools: string[] | null) => {
      scoped = { kind: "scoped", workspace: "local", actor: "key:key_1", groupId: group.id, tools };
    };
    const call = (method: string, path: string, body?: unknown) =>
      server.api(method, path, body, { authorization: "Bearer scoped" });
    return { ...server, other, as, call };
  }

  it("gates each endpoint by the tool allowlist", async () => {
    const { base, as, call } = await scopedServer();
    as(["kv_get", "kv_list"]);
    expect((await call("PUT", `${base}/keys/a`, { value: 1 })).body.error.code).toBe("tool_not_allowed");
    expect((await call("PUT", `${base}/keys/a`, { value: 1 })).status).toBe(403);
    expect((await call("GET", `${base}/keys`)).status).toBe(200);
    expect((await call("POST", `${base}/incr`, { key: "n" })).status).toBe(403);
    as(["kv_*"]);
    expect((await call("PUT", `${base}/keys/a`, { value: 1 })).status).toBe(200);
  });

  it("hides other groups and refuses account endpoints", async () => {
    const { base, other, as, call, kv } = await scopedServer();
    as(null);
    expect((await call("GET", `/v1/primitives/${other.id}/keys`)).status).toBe(404);
    expect((await call("GET", `/v1/primitives/${other.id}`)).status).toBe(404);
    expect((await call("GET", "/v1/primitives")).body.data.map((p: { id: string }) => p.id)).toEqual([kv.id]);
    expect((await call("GET", "/v1/groups/other")).body.error.code).toBe("group_mismatch");
    expect((await call("GET", "/v1/groups")).body.error.code).toBe("forbidden");
    expect((await call("POST", "/v1/groups", { name: "z" })).status).toBe(403);
    expect((await call("DELETE", `/v1/primitives/${kv.id}`)).body.error.code).toBe("forbidden");
    expect((await call("PATCH", `/v1/primitives/${kv.id}`, { name: "y" })).body.error.code).toBe("forbidden");
    expect((await call("GET", `${base}/keys`)).status).toBe(200);
  });
});

describe("signed URL CORS", () => {
  it("lets any origin preflight and read signed routes", async () => {
    const { api } = await startServer();
    const preflight = await api("OPTIONS", "/v1/signed/anything", undefined, {
      origin: "https://app.example",
      "access-control-request-method": "PUT",
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("PUT");
    const denied = await api("GET", "/v1/signed/not-a-token", undefined, { origin: "https://app.example" });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("access-control-allow-origin")).toBe("*");
    // Everything else stays closed to other sites.
    expect((await api("GET", "/v1/groups", undefined, { origin: "https://app.example" })).status).toBe(403);
  });
});
