// The sign-in limit reads the email from the bytes the auth route read, never from a clone of
// the request: on Node 22.14 (undici #4150) a clone collected by the garbage collector marks
// the original's body used, and the auth library's own clone of it then threw "unusable" — a
// 500 on sign-in, seen in CI. The collector is run here on purpose, between the two reads.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { withClientAddress } from "../src/server/client-address";
import { emailOf } from "../src/server/sign-in-limit";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

async function collect(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const url = "http://127.0.0.1/api/auth/sign-in/email";

describe("the sign-in limit's read of the email", () => {
  it("leaves the request whole for the library, a garbage collection later, JSON and form alike", async () => {
    const bodies = [
      { type: "application/json", body: JSON.stringify({ email: "ada@example.test", password: "pw" }) },
      { type: "application/x-www-form-urlencoded", body: "email=ada%40example.test&password=pw" },
    ];
    for (const { type, body } of bodies) {
      const incoming = new Request(url, { method: "POST", headers: { "content-type": type }, body });
      const forwarded = await withClientAddress(incoming, {});
      expect(await emailOf(forwarded)).toBe("ada@example.test");
      await collect();
      expect(forwarded.bodyUsed).toBe(false);
      // What the library does next (better-call parses a clone for sign-in): it must succeed.
      expect(await forwarded.clone().text()).toBe(body);
      expect(await forwarded.text()).toBe(body);
    }
  });

  it("reads a request the route did not forward through a clone, and a body without an email as none", async () => {
    const plain = new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(await emailOf(plain)).toBeUndefined();
    const direct = new Request(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bob@example.test" }),
    });
    expect(await emailOf(direct)).toBe("bob@example.test");
    const broken = await withClientAddress(
      new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: "not json" }),
      {},
    );
    expect(await emailOf(broken)).toBeUndefined();
    expect(await broken.text()).toBe("not json");
  });
});
