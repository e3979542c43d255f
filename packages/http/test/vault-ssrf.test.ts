import { describe, expect, it } from "vitest";
import { echoServer, SECRET, withGrantedSecret, withVault } from "./vault-helpers.js";

/** A grant on every host the cases use, so only the SSRF rule can refuse them. */
const GRANTED = [
  "127.0.0.1",
  "127.0.0.2",
  "localhost",
  "[::1]",
  "[::ffff:127.0.0.1]",
  "169.254.169.254",
  "[::ffff:169.254.169.254]",
  "10.0.0.1",
  "172.16.5.4",
  "192.168.1.1",
  "100.64.0.1",
  "0.0.0.0",
  "[fe80::1]",
  "[fd00::1]",
  "[::]",
  "224.0.0.1",
];

async function expectBlocked(res: { status: number; body: any }, what: string) {
  expect(res.status, what).toBe(403);
  expect(res.body.error.code, what).toBe("secret_policy_denied");
  expect(res.body.error.message, what).toContain("blocked address");
}

describe("vault: SSRF (loopback not allowed)", () => {
  it("refuses loopback, private, link-local and metadata destinations, however they are written", async () => {
    const server = await withVault({ loopback: false });
    await server.put("API_KEY", SECRET);
    expect((await server.grant({ name: "API_KEY", allow: { hosts: GRANTED } })).status).toBe(201);
    const port = server.echo.port;
    const urls = [
      `http://127.0.0.1:${port}/echo`,
      `http://localhost:${port}/echo`,
      `http://[::1]:${port}/echo`,
      `http://[::ffff:127.0.0.1]:${port}/echo`,
      `http://2130706433:${port}/echo`,
      `http://0x7f000001:${port}/echo`,
      `http://127.1:${port}/echo`,
      `http://127.0.0.2:${port}/echo`,
      "http://169.254.169.254/latest/meta-data/",
      "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
      "http://10.0.0.1/",
      "http://172.16.5.4/",
      "http://192.168.1.1/",
      "http://100.64.0.1/",
      "http://0.0.0.0/",
      "http://0/",
      "http://[fe80::1]/",
      "http://[fd00::1]/",
      "http://[::]/",
      "http://224.0.0.1/",
    ];
    for (const url of urls) await expectBlocked(await server.fetch({ url, auth: { bearer: "API_KEY" } }), url);
    expect(server.echo.received).toEqual([]);
  });

  it("checks the resolved address of a host name (localhost resolves to loopback)", async () => {
    const server = await withVault({ loopback: false });
    await server.put("API_KEY", SECRET);
    await server.grant({ name: "API_KEY", allow: { hosts: ["localhost"] } });
    const res = await server.fetch({ url: `http://localhost:${server.echo.port}/echo`, auth: { bearer: "API_KEY" } });
    await expectBlocked(res, "localhost");
    expect(res.body.error.message).toContain("127.0.0.1");
    expect(server.echo.received).toEqual([]);
  });
});

describe("vault: SSRF with the test-only loopback option", () => {
  it("lets loopback through but nothing else private", async () => {
    const server = await withVault({ loopback: true });
    await server.put("API_KEY", SECRET);
    await server.grant({ name: "API_KEY", allow: { hosts: GRANTED } });
    const ok = await server.fetch({ url: `http://localhost:${server.echo.port}/echo`, auth: { bearer: "API_KEY" } });
    expect(ok.status).toBe(200);
    for (const url of ["http://169.254.169.254/", "http://10.0.0.1/", "http://192.168.1.1/", "http://[fd00::1]/"]) {
      await expectBlocked(await server.fetch({ url, auth: { bearer: "API_KEY" } }), url);
    }
  });
});

describe("vault: redirects", () => {
  it("follows redirects within the grant, re-checking each hop", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const res = await fetch({ url: `${echo.origin}/redirect?to=/echo%3Fhop%3D2`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.body).url).toBe("/echo?hop=2");
    expect(echo.received.map((r) => r.headers.authorization)).toEqual([`Bearer ${SECRET}`, `Bearer ${SECRET}`]);
  });

  it("keeps method and body on 307, turns a POST into a GET on 302 and 303", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const post = { auth: { bearer: "API_KEY" }, method: "POST", body: "payload" };
    await fetch({ ...post, url: `${echo.origin}/redirect?status=307&to=/echo` });
    expect(echo.received.slice(0, 2).map((r) => [r.method, r.body])).toEqual([
      ["POST", "payload"],
      ["POST", "payload"],
    ]);
    for (const status of [302, 303]) {
      const before = echo.received.length;
      await fetch({ ...post, url: `${echo.origin}/redirect?status=${status}&to=/echo` });
      expect(echo.received.slice(before).map((r) => [r.method, r.body])).toEqual([
        ["POST", "payload"],
        ["GET", ""],
      ]);
    }
  });

  it("refuses a redirect to a host outside the grant; that host never sees the secret", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const other = await echoServer("127.0.0.2");
    for (const to of [
      `${other.origin}/echo`,
      `http://localhost:${other.port}/echo`,
      `http://localhost:${echo.port}/echo`,
    ]) {
      const res = await fetch({
        url: `${echo.origin}/redirect?to=${encodeURIComponent(to)}`,
        auth: { bearer: "API_KEY" },
      });
      expect(res.status, to).toBe(403);
      expect(res.body.error.code).toBe("secret_policy_denied");
      expect(res.body.error.message).toContain("does not allow host");
    }
    expect(other.received).toEqual([]);
    expect(echo.received.every((r) => r.url.startsWith("/redirect"))).toBe(true);
  });

  it("refuses a redirect to a private address even when the grant names it", async () => {
    const { fetch, echo, grant } = await withGrantedSecret();
    await grant({
      name: "API_KEY",
      allow: { hosts: [echo.host, "169.254.169.254", "10.0.0.1", "[::ffff:a9fe:a9fe]"] },
    });
    for (const to of ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://[::ffff:a9fe:a9fe]/"]) {
      const res = await fetch({
        url: `${echo.origin}/redirect?to=${encodeURIComponent(to)}`,
        auth: { bearer: "API_KEY" },
      });
      await expectBlocked(res, to);
    }
  });

  it("re-checks the grant's methods on a redirect that changes the method", async () => {
    const { fetch, echo } = await withGrantedSecret({}, { methods: ["POST"] });
    const res = await fetch({
      url: `${echo.origin}/redirect?status=303&to=/echo`,
      auth: { bearer: "API_KEY" },
      method: "POST",
      body: "x",
    });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("does not allow method GET");
    expect(echo.received).toHaveLength(1);
  });

  it("gives up with 502 after 5 redirects, and on a redirect to another scheme", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const loop = await fetch({ url: `${echo.origin}/loop`, auth: { bearer: "API_KEY" } });
    expect(loop.status).toBe(502);
    expect(loop.body.error).toEqual({ code: "upstream_error", message: "upstream redirected more than 5 times" });
    expect(echo.received).toHaveLength(6);
    const file = await fetch({
      url: `${echo.origin}/redirect?to=${encodeURIComponent("file:///etc/passwd")}`,
      auth: { bearer: "API_KEY" },
    });
    expect(file.status).toBe(502);
    expect(file.body.error.code).toBe("upstream_error");
  });
});
