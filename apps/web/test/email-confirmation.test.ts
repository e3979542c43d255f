// Confirming an address takes the account's password as well as the mailed link (pre-account
// hijacking): whoever signs up first with someone else's address chose the password, so the
// address's owner opening the link must not hand that account — and an invitation waiting for
// the address — to them. Over HTTP to the built dashboard under server.mjs with the mail capture.
import { randomBytes } from "node:crypto";
import { createWorkspace, inviteMember } from "@prim/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AuthStack,
  confirmationLink,
  confirmWithPassword,
  cookiesOf,
  type Reply,
  send,
  startAuthStack,
} from "./web-harness.js";

let stack: AuthStack;
const run = randomBytes(3).toString("hex");
const address = (name: string) => `${name}-${run}@mail.test`;
const signUp = (email: string, password: string, extra: Record<string, string> = {}) =>
  send(`${stack.url}/api/auth/sign-up/email`, { body: { email, password, name: "Someone", ...extra } });
let nextSource = 20;
/** Each sign-in from another loopback address: only the per-account limit is under test here. */
const signIn = (email: string, password: string) =>
  send(`${stack.url}/api/auth/sign-in/email`, {
    body: { email, password },
    localAddress: `127.0.0.${nextSource++}`,
  });
const verified = async (email: string) =>
  (await stack.pool.query<{ email_verified: boolean }>("SELECT email_verified FROM users WHERE email = $1", [email]))
    .rows[0]?.email_verified;
/** Where a refused confirmation sends the browser back: the same page with `?error=`. */
const errorOf = (reply: Reply) =>
  new URL(String(reply.headers.location), stack.url).searchParams.get("error") ?? `no error (${reply.status})`;

async function resetByMail(email: string, newPassword: string): Promise<void> {
  const asked = await send(`${stack.url}/api/auth/request-password-reset`, {
    body: { email, redirectTo: "/reset-password" },
  });
  expect(asked.status).toBe(200);
  const mail = await stack.mail.waitFor((m) => m.to.includes(email) && m.subject === "Reset your Prim password");
  const landed = await send(mail.links[0] as string);
  const token = new URL(String(landed.headers.location), stack.url).searchParams.get("token") as string;
  expect((await send(`${stack.url}/api/auth/reset-password`, { body: { newPassword, token } })).status).toBe(200);
}

beforeAll(async () => {
  stack = await startAuthStack("webconfirm");
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe("confirming an address needs the account's password", () => {
  it("leaves an attacker's sign-up with the invitee's address unconfirmed when the invitee opens the link", {
    timeout: 60_000,
  }, async () => {
    const { workspace } = await createWorkspace(stack.pool, { name: "Acme", plan: "pro" });
    const invitee = address("invitee");
    const { token } = await inviteMember(stack.pool, {
      workspace: workspace.id,
      email: invitee,
      role: "admin",
      invitedBy: "test",
    });
    // The attacker signs up first with the invitee's address and a password of its choosing.
    expect((await signUp(invitee, "the attacker's password")).status).toBe(200);
    const link = await confirmationLink(stack.mail, invitee);

    // The invitee (or a mail scanner fetching links) opens the link: a GET confirms nothing and
    // signs nobody in; the page asks for the password and offers the reset instead.
    const { page, posted } = await confirmWithPassword(stack, link, "the invitee's guess");
    expect(page.status).toBe(200);
    expect(cookiesOf(page)).not.toContain("session_token");
    expect(page.body as string).toContain("Enter the password you chose to confirm");
    expect(page.body as string).toContain(invitee);
    expect(page.body as string).toContain('href="/forgot-password"');
    // A wrong password, or none, confirms nothing either (and the link still works afterwards).
    expect(posted.status).toBe(302);
    expect(errorOf(posted)).toBe("wrong_password");
    expect(cookiesOf(posted)).not.toContain("session_token");
    const empty = await confirmWithPassword(stack, link, "");
    expect(cookiesOf(empty.posted)).not.toContain("session_token");
    expect(await verified(invitee)).toBe(false);

    // The attacker still cannot sign in, so holds no session to accept the invitation with.
    expect((await signIn(invitee, "the attacker's password")).status).toBe(403);
    const accept = (cookie: string) =>
      send(`${stack.url}/api/trpc/invitation.accept`, { body: { json: { token } }, headers: { cookie } });
    expect((await accept("")).status).toBe(401);

    // The rightful path: the invitee resets the password by mail (the address is then proven and
    // the account theirs, the attacker's password gone), signs in and accepts. The attacker holds
    // no session to survive the reset (which signs every session out anyway).
    const sessions = () =>
      stack.pool.query("SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1", [invitee]);
    expect((await sessions()).rowCount).toBe(0);
    await resetByMail(invitee, "the invitee's password");
    expect((await sessions()).rowCount).toBe(0);
    expect(await verified(invitee)).toBe(true);
    expect((await signIn(invitee, "the attacker's password")).status).toBe(401);
    const session = await signIn(invitee, "the invitee's password");
    expect(session.status).toBe(200);
    const joined = await accept(cookiesOf(session));
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ result: { data: { json: { workspace: workspace.id, role: "admin" } } } });
  });

  it("confirms, signs in and returns to `next` with the password chosen at sign-up", { timeout: 30_000 }, async () => {
    const email = address("rightful");
    expect((await signUp(email, "a good password", { callbackURL: "/w/somewhere" })).status).toBe(200);
    const link = await confirmationLink(stack.mail, email);
    expect(link.startsWith(`${stack.url}/verify-email/confirm?token=`)).toBe(true);
    const { page, posted } = await confirmWithPassword(stack, link, "a good password");
    expect(page.status).toBe(200);
    expect(posted.status).toBe(302);
    expect(posted.headers.location).toBe("/w/somewhere");
    const cookie = cookiesOf(posted);
    expect(cookie).toContain("session_token");
    expect(await verified(email)).toBe(true);
    const session = await send(`${stack.url}/api/auth/get-session`, { headers: { cookie } });
    expect(session.body).toMatchObject({ user: { email, emailVerified: true } });
    // The link again (still within its 24 h), `next` tampered with: signed in, kept on this site.
    const again = await confirmWithPassword(stack, link, "a good password", { next: "/\\evil.test" });
    expect(again.posted.headers.location).toBe("/");
    expect(cookiesOf(again.posted)).toContain("session_token");
  });

  it("counts wrong passwords on the page toward the account's sign-in limit", { timeout: 60_000 }, async () => {
    const email = address("guessed");
    expect((await signUp(email, "a good password")).status).toBe(200);
    const link = await confirmationLink(stack.mail, email);
    const errors: string[] = [];
    for (let i = 0; i < 11; i++) {
      const { posted } = await confirmWithPassword(stack, link, `guess ${i}`, { localAddress: `127.0.1.${i + 1}` });
      errors.push(errorOf(posted));
    }
    expect(errors).toEqual([...Array(10).fill("wrong_password"), "too_many_attempts"]);
    // Past the limit the right password confirms nothing, on the page or at sign-in.
    const right = await confirmWithPassword(stack, link, "a good password", { localAddress: "127.0.1.99" });
    expect(errorOf(right.posted)).toBe("too_many_attempts");
    expect(cookiesOf(right.posted)).not.toContain("session_token");
    expect(await verified(email)).toBe(false);
    expect((await signIn(email, "a good password")).status).toBe(429);
    // The owner, through the mailbox: a reset opens the account (and proves the address).
    await resetByMail(email, "a new password");
    expect((await signIn(email, "a new password")).status).toBe(200);
  });
});
