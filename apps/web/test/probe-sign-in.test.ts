// Security probe, issue 35 items 5 and 6, replayed against the running dashboard: the built app
// under its own server (`node server.mjs`, as `npm start` runs it) over a fresh Postgres
// database, the machine's Redis and a local SMTP capture standing in for the mailboxes. Real
// HTTP only; each request leaves from a loopback address of its own choosing (127.0.0.0/8), so
// "another client" is another socket address, as it is on the Internet.
//  5. Sign-in limits: X-Forwarded-For values (which any client writes) buy no new attempts; and
//     failures are counted per target account, whatever address they come from.
//  6. Invitations: whoever holds a forwarded link and signs up as the invited address without
//     proving it cannot accept — not even once the invitee opens the confirmation link mailed to
//     them, or posts it with a guess (confirming takes the password the attacker chose); the
//     invitee, proving the address through its mailbox (a password reset), can.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createUser, createWorkspace, inviteMember, migrate, openPool } from "@prim/db";
import { type MailCapture, startMailCapture } from "@prim/mail";
import { freshDatabase } from "@prim/testkit";
import { freePort } from "@prim/testkit/cloud";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const WEB_DIR = fileURLToPath(new URL("..", import.meta.url));
const database = freshDatabase("probe_web");
let pool: pg.Pool;
let mail: MailCapture;
let server: ChildProcess | undefined;
let web: string;

beforeAll(async () => {
  if (!existsSync(join(WEB_DIR, ".next", "BUILD_ID"))) {
    throw new Error("apps/web is not built: run `npm run build` (npm test does it first)");
  }
  await migrate({ databaseUrl: database.url });
  pool = await openPool(database.url);
  mail = await startMailCapture();
  const port = await freePort();
  web = `http://127.0.0.1:${port}`;
  // The production settings: no trusted proxy header, the default limits, real mail.
  const child = spawn(process.execPath, ["server.mjs", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: WEB_DIR,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: database.url,
      REDIS_URL: "redis://127.0.0.1:6379",
      PRIM_INTERNAL_SECRET: randomBytes(24).toString("hex"),
      PRIM_DASHBOARD_URL: web,
      SMTP_URL: mail.smtpUrl,
    },
  });
  server = child;
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the dashboard did not start: ${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => reject(new Error(`the dashboard exited (${code}): ${output}`)));
  });
}, 90_000);

afterAll(async () => {
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  await mail?.close();
  await pool?.end();
  await database.drop();
}, 30_000);

interface Answer {
  status: number;
  body: any;
  /** `name=value` of each cookie set. */
  cookies: string[];
}

/** A plain HTML form's POST to the dashboard from loopback address `from`. */
const sendForm = (path: string, fields: Record<string, string>, options: { from: string }) =>
  send(path, new URLSearchParams(fields), {
    ...options,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });

/**
 * A JSON request to the dashboard from loopback address `from`, as a browser on its page sends
 * it (form fields when `body` is URLSearchParams).
 */
function send(
  path: string,
  body: unknown,
  options: { from: string; headers?: Record<string, string>; cookies?: string[] },
): Promise<Answer> {
  const payload = body instanceof URLSearchParams ? body.toString() : JSON.stringify(body);
  const url = new URL(path, web);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        localAddress: options.from,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
          origin: web,
          ...(options.cookies === undefined ? {} : { cookie: options.cookies.join("; ") }),
          ...options.headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          const cookies = (res.headers["set-cookie"] ?? []).map((c) => c.split(";")[0] as string);
          resolve({ status: res.statusCode ?? 0, body: parsed, cookies: cookies.filter((c) => !/=$/.test(c)) });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

let nextAddress = 10;
/** A loopback address no other request of this file used. */
const freshAddress = () => `127.0.0.${nextAddress++}`;

const signIn = (email: string, password: string, from = freshAddress(), headers?: Record<string, string>) =>
  send("/api/auth/sign-in/email", { email, password }, { from, headers });

/** The tRPC mutation `invitation.accept` (superjson's envelope) with a session's cookies. */
const accept = (token: string, cookies: string[]) =>
  send("/api/trpc/invitation.accept", { json: { token } }, { from: freshAddress(), cookies });

/** The first link of the newest mail to `to` whose address matches `pattern`. */
async function linkTo(to: string, pattern: RegExp): Promise<string> {
  const found = await mail.waitFor((m) => m.to.includes(to) && m.links.some((l) => pattern.test(l)), 15_000);
  return found.links.find((l) => pattern.test(l)) as string;
}

describe("item 5: sign-in limits", () => {
  it("counts attempts per client address whatever X-Forwarded-For claims", async () => {
    const from = freshAddress();
    const statuses: number[] = [];
    for (let i = 1; i <= 11; i++) {
      const res = await signIn(`nobody-${i}@probe.test`, "wrong-password", from, {
        "x-forwarded-for": `198.51.100.${i}`,
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    // Another client, the rightful one, signs in.
    const email = `owner-${randomBytes(4).toString("hex")}@probe.test`;
    await createUser(pool, { email, password: "right-password-1" });
    expect((await signIn(email, "right-password-1")).status).toBe(200);
  });

  it("stops guesses at one account after 10 failures, from however many addresses", async () => {
    const email = `victim-${randomBytes(4).toString("hex")}@probe.test`;
    await createUser(pool, { email, password: "right-password-1" });
    expect((await signIn(email, "right-password-1")).status).toBe(200); // the account works
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await signIn(email, `guess-${i}`)).status);
    const rightPassword = (await signIn(email, "right-password-1")).status;
    expect({ statuses, rightPassword }).toEqual({ statuses: [...Array(10).fill(401), 429], rightPassword: 429 });

    // The owner, through the mailbox: a password reset opens the account again.
    const from = freshAddress();
    const asked = await send("/api/auth/request-password-reset", { email, redirectTo: "/reset-password" }, { from });
    expect(asked.status).toBe(200);
    const link = await linkTo(email, /reset-password/);
    const token = /reset-password(?:\/|\?token=)([A-Za-z0-9_-]+)/.exec(link)?.[1] as string;
    const reset = await send("/api/auth/reset-password", { token, newPassword: "new-password-2" }, { from });
    expect(reset.status).toBe(200);
    expect((await signIn(email, "new-password-2")).status).toBe(200);
  }, 30_000);
});

describe("item 6: invitations need a proven address", () => {
  it("refuses a forwarded link to whoever signs up as the invitee; the invitee proving the address joins", async () => {
    const owner = await createUser(pool, {
      email: `boss-${randomBytes(4).toString("hex")}@probe.test`,
      password: "boss-password-1",
    });
    const ws = await createWorkspace(pool, { name: "Invited", ownerId: owner.id, key: false });
    const invitee = `invitee-${randomBytes(4).toString("hex")}@probe.test`;
    const invitation = await inviteMember(pool, {
      workspace: ws.workspace.id,
      email: invitee,
      role: "admin",
      invitedBy: `user:${owner.id}`,
    });
    const membersNamed = async (email: string) =>
      (
        await pool.query<{ role: string }>(
          "SELECT m.role FROM members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND u.email = $2",
          [ws.workspace.id, email],
        )
      ).rows.map((r) => r.role);

    // The attacker holds the link: it signs up as the invited address and tries every way in.
    const from = freshAddress();
    const signedUp = await send(
      "/api/auth/sign-up/email",
      { email: invitee, password: "attacker-pw-1", name: "x" },
      { from },
    );
    // The invitee opens the confirmation link the attacker's sign-up mailed them (a mail scanner
    // would too), and tries a password of their own on its page: the attacker's account stays
    // unconfirmed, no session is handed out.
    const confirmLink = new URL(await linkTo(invitee, /\/verify-email\/confirm\?/));
    const opened = await fetch(confirmLink, { redirect: "manual" });
    expect(opened.status).toBe(200);
    expect(opened.headers.getSetCookie().join(";")).not.toContain("session_token");
    const guessed = await sendForm(
      "/api/auth/confirm-email",
      { token: confirmLink.searchParams.get("token") ?? "", password: "invitee-guess-1", next: "/" },
      { from },
    );
    const signedIn = await signIn(invitee, "attacker-pw-1");
    expect(signedIn.status).toBe(403);
    const attempts = [];
    for (const cookies of [signedUp.cookies, guessed.cookies, signedIn.cookies]) {
      if (cookies.length > 0) attempts.push((await accept(invitation.token, cookies)).status);
    }
    expect({ joined: await membersNamed(invitee), accepted: attempts.filter((s) => s === 200).length }).toEqual({
      joined: [],
      accepted: 0,
    });

    // The invitee proves the address through its mailbox (a password reset: the account the
    // attacker made is then the invitee's), signs in and accepts the same invitation.
    const asked = await send(
      "/api/auth/request-password-reset",
      { email: invitee, redirectTo: "/reset-password" },
      { from },
    );
    expect(asked.status).toBe(200);
    const link = await linkTo(invitee, /reset-password/);
    const token = /reset-password(?:\/|\?token=)([A-Za-z0-9_-]+)/.exec(link)?.[1] as string;
    expect((await send("/api/auth/reset-password", { token, newPassword: "invitee-pw-2" }, { from })).status).toBe(200);
    const session = await signIn(invitee, "invitee-pw-2");
    expect(session.status).toBe(200);
    const joined = await accept(invitation.token, session.cookies);
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    expect(await membersNamed(invitee)).toEqual(["admin"]);
  }, 30_000);
});
