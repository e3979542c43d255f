// Session tokens at rest (issue 35, item 15), against the built dashboard: the sessions table
// holds only the sha256 of the cookie's token; neither that hash nor its listed form opens a
// session even when signed with the dashboard's own secret; sessions made before (a raw token
// in the row) are hashed by the migration and stay signed in; sign-out and "sign out the other
// sessions" still reach their rows.
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createUser, MIGRATIONS_DIR } from "@prim/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webEnv } from "../src/server/env";
import { type AuthStack, cookiesOf, send, startAuthStack } from "./web-harness.js";

let stack: AuthStack;
const COOKIE = "better-auth.session_token";
/** What the table should hold for a token: its sha256, hex. */
const hashSessionToken = (token: string) => createHash("sha256").update(token).digest("hex");

beforeAll(async () => {
  stack = await startAuthStack("websessions");
  for (const email of ["ada@sessions.test", "bob@sessions.test"]) {
    await createUser(stack.pool, { email, password: "the right password" });
  }
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

const signIn = async (email: string) => {
  const reply = await send(`${stack.url}/api/auth/sign-in/email`, { body: { email, password: "the right password" } });
  expect(reply.status).toBe(200);
  return cookiesOf(reply);
};
/** The signed-in user's email for a Cookie header, or null. */
const whoIs = async (cookie: string) => {
  const reply = await send(`${stack.url}/api/auth/get-session`, { headers: { cookie } });
  return (reply.body as { user?: { email: string } } | null)?.user?.email ?? null;
};
/** The token inside a signed session cookie (`<token>.<signature>`, URL-encoded). */
const tokenOf = (cookie: string) =>
  decodeURIComponent(/better-auth\.session_token=([^;]+)/.exec(cookie)?.[1] ?? "").split(".")[0] as string;
/** A session cookie for `value`, signed the way the library signs (HMAC-SHA256 with its secret). */
const forged = (value: string) => {
  const signature = createHmac("sha256", webEnv({ PRIM_INTERNAL_SECRET: stack.secret }).authSecret)
    .update(value)
    .digest("base64");
  return `${COOKIE}=${encodeURIComponent(`${value}.${signature}`)}`;
};

describe("session tokens at rest", () => {
  it("stores only the token's hash, and the cookie still signs in", async () => {
    const cookie = await signIn("ada@sessions.test");
    const token = tokenOf(cookie);
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/);
    const rows = (await stack.pool.query<{ token: string }>("SELECT token FROM sessions")).rows.map((r) => r.token);
    expect(rows).not.toContain(token);
    expect(rows.filter((r) => r.includes(token))).toEqual([]);
    expect(rows).toContain(hashSessionToken(token));
    expect(await whoIs(cookie)).toBe("ada@sessions.test");
    // The forging works at all: the real token signed this way is a session.
    expect(await whoIs(forged(token))).toBe("ada@sessions.test");
  });

  it("opens no session with what the table holds, even signed with the secret", async () => {
    const stored = hashSessionToken(tokenOf(await signIn("ada@sessions.test")));
    expect(await whoIs(forged(stored))).toBeNull();
    expect(await whoIs(forged(`hashed:${stored}`))).toBeNull();
  });

  it("keeps a session made before the change signed in once the migration ran", async () => {
    const cookie = await signIn("bob@sessions.test");
    const token = tokenOf(cookie);
    // The row as the library wrote it before: the raw token.
    await stack.pool.query("UPDATE sessions SET token = $1 WHERE token = $2", [token, hashSessionToken(token)]);
    expect(await whoIs(cookie)).toBeNull();
    const sql = readFileSync(`${MIGRATIONS_DIR}/20261129200000_hash_session_tokens/migration.sql`, "utf8");
    await stack.pool.query(sql);
    await stack.pool.query(sql); // twice changes nothing
    expect(await whoIs(cookie)).toBe("bob@sessions.test");
  });

  it("signs out, and signs the other sessions out on a password change", { timeout: 30_000 }, async () => {
    const first = await signIn("ada@sessions.test");
    const other = await signIn("ada@sessions.test");
    const changed = await send(`${stack.url}/api/auth/change-password`, {
      body: { currentPassword: "the right password", newPassword: "the new password", revokeOtherSessions: true },
      headers: { cookie: first },
    });
    expect(changed.status).toBe(200);
    expect(await whoIs(other)).toBeNull();
    const renewed = cookiesOf(changed);
    expect(await whoIs(renewed)).toBe("ada@sessions.test");
    const out = await send(`${stack.url}/api/auth/sign-out`, {
      method: "POST",
      body: {},
      headers: { cookie: renewed },
    });
    expect(out.status).toBe(200);
    expect(await whoIs(renewed)).toBeNull();
    const left = await stack.pool.query("SELECT 1 FROM sessions WHERE token = $1", [
      hashSessionToken(tokenOf(renewed)),
    ]);
    expect(left.rowCount).toBe(0);
  });
});
