// Sign-in attempts per account (the dashboard's limit, issue 35): in Redis, shared by every
// process; with Redis away, each process keeps the same rule on its own.
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { SignInAttempts } from "../src/index.js";

const rule = { max: 3, windowSeconds: 60 };
const shared = [new SignInAttempts("redis://127.0.0.1:6379"), new SignInAttempts("redis://127.0.0.1:6379")];
const away = new SignInAttempts("redis://127.0.0.1:1");
const key = () => randomBytes(8).toString("hex");

afterAll(() => {
  for (const attempts of [...shared, away]) attempts.close();
});

describe("SignInAttempts", () => {
  it("allows max reservations per key across instances, then refuses with the time left", async () => {
    const k = key();
    const [a, b] = shared as [SignInAttempts, SignInAttempts];
    expect((await a.reserve(k, rule)).allowed).toBe(true);
    expect((await b.reserve(k, rule)).allowed).toBe(true);
    expect((await a.reserve(k, rule)).allowed).toBe(true);
    const refused = await b.reserve(k, rule);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.retryAfter).toBeLessThanOrEqual(60);
    // Another key is untouched.
    expect((await a.reserve(key(), rule)).allowed).toBe(true);
  });

  it("gives a slot back on release, and opens the key on clear", async () => {
    const k = key();
    const [a, b] = shared as [SignInAttempts, SignInAttempts];
    for (let i = 0; i < 3; i++) await a.reserve(k, rule);
    await b.release(k);
    expect((await a.reserve(k, rule)).allowed).toBe(true);
    expect((await a.reserve(k, rule)).allowed).toBe(false);
    await b.clear(k);
    expect((await a.reserve(k, rule)).allowed).toBe(true);
  });

  it("lets exactly max through when reservations arrive at once", async () => {
    const k = key();
    const verdicts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (shared[i % 2] as SignInAttempts).reserve(k, rule)),
    );
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(3);
  });

  it("keeps the rule in the process while Redis does not answer", async () => {
    const k = key();
    const now = 1_000_000;
    for (let i = 0; i < 3; i++) expect((await away.reserve(k, rule, now)).allowed).toBe(true);
    expect(await away.reserve(k, rule, now + 1000)).toEqual({ allowed: false, retryAfter: 59 });
    await away.release(k, now + 1000);
    expect((await away.reserve(k, rule, now + 1000)).allowed).toBe(true);
    // A new window after the old one ends.
    expect((await away.reserve(k, rule, now + 61_000)).allowed).toBe(true);
  });
});
