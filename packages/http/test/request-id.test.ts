import { request } from "node:http";
import { LOCAL_PRINCIPAL, type Principal } from "@prim/engine";
import { startServer, withKv } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

/**
 * `X-Request-Id` on every response (spec, Errors): checked on each error status the local engine
 * can give — 401, 403, 413, 423 — on signed URLs, and on Fastify's own request errors (a bad
 * percent escape, an over-long segment, an over-long URL). The local engine has no rate limit,
 * so 429 is not reachable here (the MCP session cap's 429 is in packages/mcp).
 */

type Answer = { status: number; headers: Headers; text: string };

function expectIdAndShape(res: Answer, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("x-request-id")).toMatch(/\S/);
  expect(JSON.parse(res.text)).toEqual({ error: { code, message: expect.any(String) } });
}

/** A raw HTTP/1.1 request: fetch refuses to send some of the URLs under test. */
function raw(url: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: "GET", headers, insecureHTTPParser: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, text: Buffer.concat(chunks).toString() });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("X-Request-Id on every answer", () => {
  it("401 invalid_token without the root token, 403 forbidden for another Host", async () => {
    const s = await startServer({ rootToken: "r00t" });
    expectIdAndShape(await s.api("GET", "/v1/groups"), 401, "invalid_token");
    expectIdAndShape(
      await s.api("GET", "/v1/groups", undefined, { authorization: "Bearer wrong" }),
      401,
      "invalid_token",
    );
    const rebound = await raw(s.url, "/v1/groups", { host: "evil.example", authorization: "Bearer r00t" });
    expectIdAndShape(rebound, 403, "forbidden");
  });

  it("403 forbidden and group_mismatch for a scoped key, 413, 423", async () => {
    let scoped: Principal = LOCAL_PRINCIPAL;
    const s = await withKv({
      authenticate: (req) => (req.headers.authorization === "Bearer k" ? scoped : LOCAL_PRINCIPAL),
    });
    const other = (await s.api("POST", "/v1/groups", { name: "other" })).body;
    scoped = { kind: "scoped", workspace: "local", actor: "key:k", groupId: other.id, tools: null };
    const key = { authorization: "Bearer k" };
    expectIdAndShape(await s.api("GET", "/v1/groups", undefined, key), 403, "forbidden");
    expectIdAndShape(await s.api("GET", "/v1/groups/app", undefined, key), 403, "group_mismatch");
    // 16 MiB is the JSON body limit; one byte more is refused before parsing.
    const huge = `{"value":"${"x".repeat(16 * 1024 * 1024)}"}`;
    expectIdAndShape(await s.api("PUT", `${s.base}/keys/big`, huge), 413, "payload_too_large");
    await s.api("POST", `${s.base}/pause`);
    expectIdAndShape(await s.api("GET", `${s.base}/keys/a`), 423, "paused");
  });

  it("signed URLs: a download and a refused token both carry it", async () => {
    const s = await startServer();
    await s.api("POST", "/v1/groups", { name: "app" });
    const store = (await s.api("POST", "/v1/primitives", { name: "files", type: "storage", group: "app" })).body;
    await s.api("PUT", `/v1/primitives/${store.id}/objects/a.txt`, "bytes", { "content-type": "text/plain" });
    const { url } = (await s.api("POST", `/v1/primitives/${store.id}/presign`, { key: "a.txt" })).body;
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-request-id")).toMatch(/\S/);
    const bad = await s.api("GET", "/v1/signed/not-a-token");
    expectIdAndShape(bad, 403, "forbidden");
  });

  it("framework-level errors: a bad escape, a 3,000-character segment, a 100 KB URL", async () => {
    const s = await startServer();
    expectIdAndShape(await raw(s.url, "/v1/groups/%FF"), 400, "invalid_request");
    const segment = await raw(s.url, `/v1/groups/${"a".repeat(3_000)}`);
    expect(segment.headers.get("x-request-id")).toMatch(/\S/);
    expect(JSON.parse(segment.text).error.code).toEqual(expect.any(String));
    expect(segment.text).not.toContain("a".repeat(100)); // the path is not echoed
    const long = await raw(s.url, `/v1/groups?x=${"b".repeat(100_000)}`);
    expect(long.headers.get("x-request-id")).toMatch(/\S/);
    expect(JSON.parse(long.text).error.code).toEqual(expect.any(String));
  });
});
