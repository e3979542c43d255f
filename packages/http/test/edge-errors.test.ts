import { connect } from "node:net";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/**
 * Sends bytes as they are over a TCP socket and reads until the server closes or one response
 * has arrived (fetch and node:http refuse to send most of these requests).
 */
function rawHttp(url: string, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      socket.destroy();
      const all = Buffer.concat(chunks).toString("latin1");
      const split = all.indexOf("\r\n\r\n");
      const [statusLine = "", ...lines] = all.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const text = all.slice(split + 4, split + 4 + Number(headers["content-length"] ?? 0));
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body, text });
    };
    const complete = () => {
      const all = Buffer.concat(chunks).toString("latin1");
      const split = all.indexOf("\r\n\r\n");
      if (split === -1) return false;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(all.slice(0, split))?.[1];
      return length !== undefined && all.length >= split + 4 + Number(length);
    };
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      if (complete()) finish();
    });
    socket.on("end", finish);
    socket.on("error", (err) => (chunks.length > 0 ? finish() : reject(err)));
    socket.write(request);
  });
}

const get = (path: string, headers = "Host: localhost\r\n") => `GET ${path} HTTP/1.1\r\n${headers}\r\n`;

function expectSpecError(res: RawAnswer, status: number, code: string, mustNotContain: string[] = []): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
  expect(Object.keys(res.body.error).sort()).toEqual(["code", "message"]);
  expect(res.headers["x-request-id"]).toMatch(/^req_[0-9a-z]{26}$/);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  for (const text of mustNotContain) expect(res.text).not.toContain(text);
}

describe("router errors answer in the spec's shape", () => {
  it("a path that is not valid percent-encoded UTF-8 is 400 invalid_request, not FST_ERR_BAD_URL", async () => {
    const { url } = await startServer();
    for (const path of ["/v1/groups/%FF", "/v1/groups/%E0%A4%A", "/v1/primitives/%C0%AF/keys/a"]) {
      const res = await rawHttp(url, get(path));
      expectSpecError(res, 400, "invalid_request", ["FST_", "%FF", "%C0", "statusCode"]);
    }
  });

  it("a path segment over 2,048 characters is 400 invalid_request without echoing it (Fastify: 414)", async () => {
    const { url } = await startServer();
    const segment = "a".repeat(3000);
    const res = await rawHttp(url, get(`/v1/groups/${segment}`));
    expectSpecError(res, 400, "invalid_request", [segment.slice(0, 100), "FST_"]);
    expect(res.body.error.message).toContain("2048");
  });

  it("checks Host and the root token before judging the URL", async () => {
    const { url } = await startServer({ rootToken: "tok-edge" });
    const noToken = await rawHttp(url, get("/v1/groups/%FF"));
    expectSpecError(noToken, 401, "invalid_token");
    expect(noToken.headers["www-authenticate"]).toBe('Bearer realm="prim"');
    const longNoToken = await rawHttp(url, get(`/v1/groups/${"b".repeat(3000)}`));
    expectSpecError(longNoToken, 401, "invalid_token");
    const otherHost = await rawHttp(
      url,
      get("/v1/groups/%FF", "Host: evil.example\r\nAuthorization: Bearer tok-edge\r\n"),
    );
    expectSpecError(otherHost, 403, "forbidden");
    const withToken = await rawHttp(
      url,
      get("/v1/groups/%FF", "Host: localhost\r\nAuthorization: Bearer tok-edge\r\n"),
    );
    expectSpecError(withToken, 400, "invalid_request");
  });

  it("keeps the caller's sane X-Request-Id on router errors", async () => {
    const { url } = await startServer();
    const res = await rawHttp(url, get("/v1/groups/%FF", "Host: localhost\r\nX-Request-Id: trace-77\r\n"));
    expect(res.status).toBe(400);
    expect(res.headers["x-request-id"]).toBe("trace-77");
  });

  it("an unknown route is 404 not_found without echoing the path (it may carry a signed token)", async () => {
    const { url } = await startServer();
    const res = await rawHttp(url, get("/v1/nowhere-secret-looking-path?q=1"));
    expectSpecError(res, 404, "not_found", ["nowhere-secret-looking-path"]);
  });
});

describe("HTTP parser errors answer in the spec's shape", () => {
  it("a 100 KB URL is 400 invalid_request with X-Request-Id (Node: 431), echoing nothing", async () => {
    const { url } = await startServer();
    const res = await rawHttp(url, get(`/v1/groups/${"c".repeat(100 * 1024)}`));
    expectSpecError(res, 400, "invalid_request", ["ccccc", "statusCode"]);
    expect(res.headers.connection).toBe("close");
  });

  it("oversized headers are 400 invalid_request with X-Request-Id (Node: 431)", async () => {
    const { url } = await startServer();
    const res = await rawHttp(url, get("/health", `Host: localhost\r\nX-Big: ${"d".repeat(20_000)}\r\n`));
    expectSpecError(res, 400, "invalid_request", ["ddddd", "Request Header Fields Too Large"]);
  });

  it("bad framing is 400 invalid_request with X-Request-Id (Node: a bare 400 'Client Error')", async () => {
    const { url } = await startServer();
    const requests = [
      "GARBAGE\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST /v1/groups HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: localhost\r\nBad Header Name: x\r\n\r\n",
      "GET /he alth HTTP/1.1\r\nHost: localhost\r\n\r\n",
    ];
    for (const request of requests) expectSpecError(await rawHttp(url, request), 400, "invalid_request");
  });

  it("the server keeps answering after each of these", async () => {
    const { url, api } = await startServer();
    await rawHttp(url, "GARBAGE\r\n\r\n");
    await rawHttp(url, get(`/v1/groups/${"e".repeat(100 * 1024)}`));
    await rawHttp(url, get("/v1/groups/%FF"));
    expect((await api("GET", "/health")).status).toBe(200);
  });
});

describe("body errors answer in the spec's shape", () => {
  it("a body over the limit, a bad media type and bad JSON all carry X-Request-Id", async () => {
    const { url } = await startServer();
    const post = (type: string, body: string, length = Buffer.byteLength(body)) =>
      `POST /v1/groups HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n${body}`;
    expectSpecError(await rawHttp(url, post("text/plain", "name=x")), 400, "invalid_request");
    expectSpecError(await rawHttp(url, post("application/json", '{"name":')), 400, "invalid_request");
    // Declared 17 MiB: refused from the header, before the body is read.
    expectSpecError(await rawHttp(url, post("application/json", "", 17 * 1024 * 1024)), 413, "payload_too_large");
  });
});
