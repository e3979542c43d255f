import { createHmac } from "node:crypto";
import type { AttemptVerdict, SignInAttempts } from "@prim/db";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { forwardedBody } from "./client-address";

export interface AccountLimit {
  attempts: () => Promise<SignInAttempts>;
  max: number;
  windowSeconds: number;
  /** Keys are an HMAC of the address with this secret: Redis never holds an address. */
  secret: string;
}

/** The auth library's own answer to too many requests (its rate limiter's), so the form treats both alike. */
export function tooManyRequests(retryAfter: number): Response {
  return new Response(JSON.stringify({ message: "Too many requests. Please try again later." }), {
    status: 429,
    statusText: "Too Many Requests",
    headers: { "Content-Type": "application/json", "X-Retry-After": String(Math.max(1, retryAfter)) },
  });
}

const accountKey = (secret: string, email: string) =>
  createHmac("sha256", secret).update(`sign-in:${email.trim().toLowerCase()}`).digest("hex");

/**
 * The email a sign-in request names: from the bytes `withClientAddress` read (never a clone the
 * garbage collector could turn against the request: see `forwardedBody`), else from a clone.
 */
export async function emailOf(request: Request): Promise<string | undefined> {
  try {
    const bytes = forwardedBody(request);
    const text = bytes === undefined ? await request.clone().text() : new TextDecoder().decode(bytes);
    const type = request.headers.get("content-type") ?? "";
    const email = type.includes("application/x-www-form-urlencoded")
      ? new URLSearchParams(text).get("email")
      : (JSON.parse(text) as { email?: unknown }).email;
    return typeof email === "string" && email.length > 0 ? email : undefined;
  } catch {
    return undefined; // the endpoint refuses the body itself
  }
}

/**
 * Failed sign-ins per target account (issue 35): `max` wrong passwords per account in a window,
 * whichever client address they come from, then 429 for every attempt on that account until the
 * window ends (the right password too: otherwise guessing would simply go on). A slot is taken
 * before the password is checked and given back unless the password was wrong, so concurrent
 * guesses cannot pass one stale count. Unknown addresses are counted alike (no enumeration).
 */
export function accountSignInLimit(limit: AccountLimit): BetterAuthPlugin {
  return {
    id: "prim-account-sign-in-limit",
    async onRequest(request) {
      if (request.method !== "POST" || !new URL(request.url).pathname.endsWith("/sign-in/email")) return;
      const email = await emailOf(request);
      if (email === undefined) return;
      const verdict = await reserveAccountAttempt(limit, email);
      if (!verdict.allowed) return { response: tooManyRequests(verdict.retryAfter) };
    },
    hooks: {
      after: [
        {
          matcher: (ctx) => ctx.path === "/sign-in/email",
          handler: createAuthMiddleware(async (ctx) => {
            const email = (ctx.body as { email?: unknown } | undefined)?.email;
            if (typeof email !== "string") return;
            const returned = ctx.context.returned;
            const wrongPassword = isAPIError(returned) && returned.statusCode === 401;
            if (!wrongPassword) await releaseAccountAttempt(limit, email);
          }),
        },
      ],
    },
  };
}

/**
 * Takes one of the account's attempts before its password is checked (sign-in, and the address
 * confirmation page: one counter, so neither is a way around the other).
 */
export async function reserveAccountAttempt(limit: AccountLimit, email: string): Promise<AttemptVerdict> {
  return (await limit.attempts()).reserve(accountKey(limit.secret, email), {
    max: limit.max,
    windowSeconds: limit.windowSeconds,
  });
}

/** Gives a reserved attempt back: the password was right (only wrong ones count). */
export async function releaseAccountAttempt(limit: AccountLimit, email: string): Promise<void> {
  await (await limit.attempts()).release(accountKey(limit.secret, email));
}

/** Clears an account's failures (after a password reset through its mailbox). */
export async function clearSignInFailures(limit: AccountLimit, email: string): Promise<void> {
  await (await limit.attempts()).clear(accountKey(limit.secret, email));
}
