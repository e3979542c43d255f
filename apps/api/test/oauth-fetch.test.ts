// Client ID Metadata Documents are fetched through the vault's SSRF guard: an inner address,
// by number or by a name that resolves inward, is refused before anything is sent.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedFetch } from "../src/oauth/provider.js";

let hits = 0;
const server = createServer((_req, res) => {
  hits++;
  res.end("{}");
});
let port = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("the authorization server's document fetch", () => {
  it("refuses loopback, private and link-local addresses, and names that resolve to them", async () => {
    for (const url of [
      `http://127.0.0.1:${port}/client.json`,
      `https://127.0.0.1:${port}/client.json`,
      `https://localhost:${port}/client.json`,
      "https://10.0.0.1/client.json",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/client.json",
    ]) {
      await expect(guardedFetch(url, { method: "GET", headers: {} } as never), url).rejects.toMatchObject({
        code: "secret_policy_denied",
        message: expect.stringContaining("blocked address"),
      });
    }
    expect(hits).toBe(0);
  });
});
