// Accounts and mail in the built dashboard (issue 35, items 6 and 16), over HTTP to server.mjs
// with the local mail capture as SMTP_URL: a sign-up opens no session until the mailed link is
// followed and the password entered there; a sign-up with a known address answers exactly like
// one with a new address and mails the owner instead; a password reset goes through the mailbox.
// Invitations and someone else's sign-up with the invitee's address: email-confirmation.test.ts.
import { randomBytes } from "node:crypto";
import { createUser } from "@prim/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webEnv } from "../src/server/env";
import {
  type AuthStack,
  confirmationLink,
  confirmWithPassword,
  cookiesOf,
  send,
  signUpVerified,
  startAuthStack,
} from "./web-harness.js";

let stack: AuthStack;
const run = randomBytes(3).toString("hex");
const address = (name: string) => `${name}-${run}@mail.test`;
const signUp = (email: string, password: string, extra: Record<string, string> = {}) =>
  send(`${stack.url}/api/auth/sign-up/email`, { body: { email, password, name: "Someone", ...extra } });
const signIn = (email: string, password: string) =>
  send(`${stack.url}/api/auth/sign-in/email`, { body: { email, password } });

/** The shape of a JSON value: its keys, recursively, with the type of each leaf. */
function shapeOf(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value === null ? "null" : typeof value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, shapeOf(v)]),
  );
}

beforeAll(async () => {
  stack = await startAuthStack("webmail", {}, { devMailPage: true });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe("email verification", () => {
  it("opens a new account only through the mailed link", { timeout: 30_000 }, async () => {
    const email = address("new");
    const made = await signUp(email, "a good password", { callbackURL: "/w/somewhere" });
    expect(made.status).toBe(200);
    expect(cookiesOf(made)).not.toContain("session_token");
    const first = await confirmationLink(stack.mail, email);
    expect(first.startsWith(`${stack.url}/verify-email/confirm?token=`)).toBe(true);
    // The right password does not sign in yet (and mails a fresh link, to the same page).
    const early = await signIn(email, "a good password");
    expect(early.status).toBe(403);
    expect(cookiesOf(early)).not.toContain("session_token");
    await expect.poll(() => stack.mail.messages().filter((m) => m.to.includes(email)).length).toBe(2);
    const fresh = await confirmationLink(stack.mail, email);
    expect(fresh).not.toBe(first);
    expect(fresh.startsWith(`${stack.url}/verify-email/confirm?token=`)).toBe(true);
    // The first link (still within its 24 h, keeping the sign-up's `next`), and the password
    // entered on its page (email-confirmation.test.ts: without it, nothing).
    const { posted: confirmed } = await confirmWithPassword(stack, first, "a good password");
    expect(confirmed.status).toBe(302);
    expect(confirmed.headers.location).toBe("/w/somewhere");
    expect(cookiesOf(confirmed)).toContain("session_token");
    expect((await signIn(email, "a good password")).status).toBe(200);
  });

  it("answers a sign-up with a known address exactly as one with a new address, and mails the owner", {
    timeout: 30_000,
  }, async () => {
    const owner = address("owner");
    await signUpVerified(stack, owner, "the owner's password");
    const again = await signUp(owner, "another password");
    const fresh = await signUp(address("fresh"), "another password");
    expect(again.status).toBe(fresh.status);
    expect(shapeOf(again.body)).toEqual(shapeOf(fresh.body));
    expect((again.body as { token: unknown }).token).toBeNull();
    expect(cookiesOf(again)).toBe(cookiesOf(fresh));
    const note = await stack.mail.waitFor((m) => m.to.includes(owner) && m.subject.startsWith("Someone tried"));
    expect(note.links).toEqual([`${stack.url}/sign-in`, `${stack.url}/forgot-password`]);
    // The owner's account is unchanged: one user, the old password.
    const users = await stack.pool.query("SELECT 1 FROM users WHERE email = $1", [owner]);
    expect(users.rowCount).toBe(1);
    expect((await signIn(owner, "the owner's password")).status).toBe(200);
    expect((await signIn(owner, "another password")).status).toBe(401);
  });
});

describe("password reset by mail", () => {
  it("sets a new password through the mailed link, once; an unknown address gets the same answer", {
    timeout: 30_000,
  }, async () => {
    const email = address("forgetful");
    await createUser(stack.pool, { email, password: "the old password" });
    const asked = await send(`${stack.url}/api/auth/request-password-reset`, {
      body: { email, redirectTo: "/reset-password" },
    });
    const unknown = await send(`${stack.url}/api/auth/request-password-reset`, {
      body: { email: address("nobody"), redirectTo: "/reset-password" },
    });
    expect(asked.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual(asked.body);
    const mail = await stack.mail.waitFor((m) => m.to.includes(email) && m.subject === "Reset your Prim password");
    const landed = await send(mail.links[0] as string);
    expect(landed.status).toBe(302);
    const location = new URL(landed.headers.location as string, stack.url);
    expect(location.pathname).toBe("/reset-password");
    const token = location.searchParams.get("token") as string;
    // Stored as its hash only.
    const stored = await stack.pool.query("SELECT 1 FROM verifications WHERE identifier LIKE $1", [`%${token}%`]);
    expect(stored.rowCount).toBe(0);
    const page = await send(`${stack.url}${location.pathname}${location.search}`);
    expect(page.status).toBe(200);
    const reset = await send(`${stack.url}/api/auth/reset-password`, {
      body: { newPassword: "the new password", token },
    });
    expect(reset.status).toBe(200);
    expect((await signIn(email, "the new password")).status).toBe(200);
    expect((await signIn(email, "the old password")).status).toBe(401);
    const twice = await send(`${stack.url}/api/auth/reset-password`, {
      body: { newPassword: "a third password", token },
    });
    expect(twice.status).toBe(400);
    expect(stack.mail.messages().filter((m) => m.to.includes(address("nobody")))).toEqual([]);
  });
});

describe("the development mail page", () => {
  it("lists the captured mail on a loopback dashboard with a capture", async () => {
    const page = await send(`${stack.url}/dev/mail`);
    expect(page.status).toBe(200);
    expect(page.body as string).toContain("Captured mail");
    await signUp(address("listed"), "a good password");
    const link = await confirmationLink(stack.mail, address("listed"));
    const listed = (await send(`${stack.url}/dev/mail`)).body as string;
    expect(listed).toContain(address("listed"));
    expect(listed).toContain(link.replaceAll("&", "&amp;"));
  });

  it("exists only on a loopback dashboard with a capture configured", () => {
    const base = { PRIM_INTERNAL_SECRET: "x".repeat(32), PRIM_MAIL_CAPTURE_URL: "http://127.0.0.1:1025" };
    expect(webEnv({ ...base, PRIM_DASHBOARD_URL: "http://localhost:3000" }).devMailPage).toBe(true);
    expect(webEnv({ ...base, PRIM_DASHBOARD_URL: "http://127.0.0.1:3000" }).devMailPage).toBe(true);
    expect(webEnv({ ...base, PRIM_DASHBOARD_URL: "https://dash.prim.dev" }).devMailPage).toBe(false);
    expect(webEnv({ ...base, PRIM_DASHBOARD_URL: "http://127.0.0.1.evil.test" }).devMailPage).toBe(false);
    expect(webEnv({ PRIM_INTERNAL_SECRET: "x".repeat(32) }).devMailPage).toBe(false);
  });
});
