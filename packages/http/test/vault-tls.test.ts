import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSecureContext } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET, withVault } from "./vault-helpers.js";

/** An HTTPS server with a self-signed certificate for `localhost`, recording what reaches it. */
let server: Server;
let port = 0;
const serverNames: (string | undefined)[] = [];
let requests = 0;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "prim-vault-tls-"));
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"].concat([
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ]),
      { stdio: "ignore" },
    );
    const key = readFileSync(join(dir, "key.pem"));
    const cert = readFileSync(join(dir, "cert.pem"));
    server = createServer(
      {
        key,
        cert,
        SNICallback: (name, cb) => {
          serverNames.push(name);
          cb(null, createSecureContext({ key, cert }));
        },
      },
      (_req, res) => {
        requests++;
        res.end("ok");
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("vault: TLS", () => {
  it("connects to the checked address, sends the host name as SNI, and verifies the certificate", async () => {
    const vault = await withVault();
    await vault.put("API_KEY", SECRET);
    await vault.grant({ name: "API_KEY", allow: { hosts: ["localhost"] } });
    const res = await vault.fetch({ url: `https://localhost:${port}/`, auth: { bearer: "API_KEY" } });
    // The certificate is self-signed: the handshake fails before any request (or secret) is sent.
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("upstream_error");
    expect(res.body.error.message).toMatch(/^upstream request to 'localhost' failed \([A-Z_]+\)$/);
    expect(serverNames).toEqual(["localhost"]);
    expect(requests).toBe(0);
  });
});
