import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newWebhookSecret, signWebhook, verifyWebhook, webhookHeaders } from "../src/index.js";

// The published Standard Webhooks test vector (its reference libraries reproduce it exactly).
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

describe("Standard Webhooks signatures", () => {
  it("reproduces the published test vector, and verifies it at its own time", async () => {
    expect(await signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
    const headers = {
      "webhook-id": VECTOR.id,
      "webhook-timestamp": String(VECTOR.timestamp),
      "webhook-signature": `v1,bm9wZQ== ${VECTOR.signature}`,
    };
    expect(await verifyWebhook(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp * 1000)).toBe(true);
  });

  it("a changed body, id, timestamp or secret, or a stale timestamp, does not verify; the genuine one does", async () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const now = Date.UTC(2026, 10, 27);
    const body = '{"seq":1}';
    const headers = await webhookHeaders(secret, "prm_x.1", body, now);
    expect(await verifyWebhook(secret, headers, body, now)).toBe(true);
    // An independent HMAC (node:crypto) of the same string agrees.
    const key = Buffer.from(secret.slice(6), "base64");
    const digest = createHmac("sha256", key).update(`prm_x.1.${headers["webhook-timestamp"]}.${body}`).digest("base64");
    expect(headers["webhook-signature"]).toBe(`v1,${digest}`);
    expect(await verifyWebhook(secret, headers, '{"seq":2}', now)).toBe(false);
    expect(await verifyWebhook(secret, { ...headers, "webhook-id": "prm_x.2" }, body, now)).toBe(false);
    expect(await verifyWebhook(secret, { ...headers, "webhook-timestamp": String(now / 1000 + 1) }, body, now)).toBe(
      false,
    );
    expect(await verifyWebhook(newWebhookSecret(), headers, body, now)).toBe(false);
    expect(await verifyWebhook(secret, headers, body, now + 6 * 60_000)).toBe(false);
    expect(await verifyWebhook(secret, { ...headers, "webhook-signature": "" }, body, now)).toBe(false);
    expect(await verifyWebhook(secret, {}, body, now)).toBe(false);
  });
});
