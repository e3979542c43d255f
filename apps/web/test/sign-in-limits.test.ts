// Sign-in limits of the built dashboard (issue 35, item 5), over HTTP to server.mjs: the address
// that counts is the socket's (X-Forwarded-For and the internal headers are a client's to
// forge, so they change nothing) unless PRIM_CLIENT_IP_HEADER names a trusted proxy's header;
// and failures per account are limited across addresses and across dashboard processes
// (Redis), with the library's own 429 — while the right password works for another account,
// and for the same one once the window is over.
import { randomBytes } from "node:crypto";
import { createUser } from "@prim/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, type Reply, send, startAuthStack, startWebServer, type WebServer } from "./web-harness.js";

const TOO_MANY = { message: "Too many requests. Please try again later." };
const run = randomBytes(3).toString("hex");
const address = (name: string) => `${name}-${run}@limits.test`;
const randomIp = () => `203.0.113.${Math.floor(Math.random() * 254) + 1}`;

const signIn = (url: string, email: string, password: string, init: Parameters<typeof send>[1] = {}) =>
  send(`${url}/api/auth/sign-in/email`, { ...init, body: { email, password } });

describe("the per-address limit counts the socket's address", () => {
  let stack: AuthStack;
  beforeAll(async () => {
    stack = await startAuthStack("weblimits_socket", { PRIM_SIGN_IN_PER_MINUTE: "5" });
    await createUser(stack.pool, { email: address("ok"), password: "the right password" });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it("X-Forwarded-For and forged internal headers do not make a new address", { timeout: 30_000 }, async () => {
    const answers: Reply[] = [];
    // A new account each time (so only the address limit can answer 429), a new claimed address each time.
    for (let i = 0; i < 7; i++) {
      const forged = randomIp();
      answers.push(
        await signIn(stack.url, address(`guess${i}`), "wrong password", {
          headers: { "x-forwarded-for": forged, "x-prim-socket-address": forged, "x-prim-client-address": forged },
        }),
      );
    }
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(answers[5]?.body).toEqual(TOO_MANY);
    // Another client (another socket address) is not affected: the right password signs in.
    const other = await signIn(stack.url, address("ok"), "the right password", { localAddress: "127.0.0.2" });
    expect(other.status).toBe(200);
  });

  it("serves no development mail page without a configured capture", async () => {
    expect((await send(`${stack.url}/dev/mail`)).status).toBe(404);
  });
});

describe("failed sign-ins per account, behind a trusted proxy", () => {
  let stack: AuthStack;
  /** A second dashboard process over the same database and Redis. */
  let second: WebServer;
  /** A third, whose accounts lock after 2 failures for 5 seconds (the first failure sets an account's window). */
  let brief: WebServer;
  beforeAll(async () => {
    // The proxy's header is trusted here, so every guess may come from its own address.
    const env = { PRIM_CLIENT_IP_HEADER: "x-forwarded-for", PRIM_SIGN_IN_PER_MINUTE: "1000" };
    stack = await startAuthStack("weblimits_account", env);
    second = await startWebServer(stack.env);
    brief = await startWebServer({
      ...stack.env,
      PRIM_SIGN_IN_FAILURES_PER_ACCOUNT: "2",
      PRIM_SIGN_IN_FAILURE_WINDOW_SECONDS: "5",
    });
    for (const name of ["victim", "bystander", "shared", "racer", "patient"]) {
      await createUser(stack.pool, { email: address(name), password: "the right password" });
    }
  }, 120_000);
  afterAll(async () => {
    await brief?.stop();
    await second?.stop();
    await stack?.stop();
  });

  it("refuses the 11th attempt on an account whatever address it claims, the right password too", {
    timeout: 30_000,
  }, async () => {
    for (let i = 0; i < 10; i++) {
      const guess = await signIn(stack.url, address("victim"), `guess ${i}`, {
        headers: { "x-forwarded-for": randomIp() },
      });
      expect(guess.status).toBe(401);
    }
    const locked = await signIn(stack.url, address("victim"), "the right password", {
      headers: { "x-forwarded-for": randomIp() },
    });
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual(TOO_MANY);
    expect(Number(locked.headers["x-retry-after"])).toBeGreaterThan(0);
    // Another account, from the same addresses: the right password works.
    const bystander = await signIn(stack.url, address("bystander"), "the right password", {
      headers: { "x-forwarded-for": randomIp() },
    });
    expect(bystander.status).toBe(200);
  });

  it("counts across dashboard processes", { timeout: 30_000 }, async () => {
    for (let i = 0; i < 10; i++) {
      const url = i % 2 === 0 ? stack.url : second.url;
      expect(
        (await signIn(url, address("shared"), `guess ${i}`, { headers: { "x-forwarded-for": randomIp() } })).status,
      ).toBe(401);
    }
    for (const url of [stack.url, second.url]) {
      expect((await signIn(url, address("shared"), "the right password")).status).toBe(429);
    }
  });

  it("lets no more than the limit through when guesses arrive at once", { timeout: 30_000 }, async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        signIn(i % 2 === 0 ? stack.url : second.url, address("racer"), `guess ${i}`, {
          headers: { "x-forwarded-for": randomIp() },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });

  it("opens the account again when the window is over", { timeout: 30_000 }, async () => {
    for (let i = 0; i < 2; i++) {
      expect((await signIn(brief.url, address("patient"), `guess ${i}`)).status).toBe(401);
    }
    const locked = await signIn(brief.url, address("patient"), "the right password");
    expect(locked.status).toBe(429);
    await new Promise((r) => setTimeout(r, (Number(locked.headers["x-retry-after"]) + 1) * 1000));
    expect((await signIn(brief.url, address("patient"), "the right password")).status).toBe(200);
  });
});
