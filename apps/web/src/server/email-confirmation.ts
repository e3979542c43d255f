import type { BetterAuthPlugin } from "better-auth";
import { createAuthEndpoint } from "better-auth/api";
import { setSessionCookie } from "better-auth/cookies";
import { verifyJWT } from "better-auth/crypto";
import * as z from "zod";
import { safeNext } from "@/lib/safe-next";
import { type AccountLimit, releaseAccountAttempt, reserveAccountAttempt } from "./sign-in-limit";

/** The page a confirmation link opens: it asks for the account's password (never confirms on a GET). */
export const CONFIRM_PAGE = "/verify-email/confirm";
/** Where its form posts (under the auth routes: `/api/auth/confirm-email`). */
export const CONFIRM_PATH = "/confirm-email";
/** The longest password the library accepts (auth.ts); anything longer is simply wrong. */
const MAX_PASSWORD = 128;

export type ConfirmError = "invalid_link" | "wrong_password" | "too_many_attempts";

/**
 * The library's confirmation link (`…/api/auth/verify-email?token=…&callbackURL=…`, made at
 * sign-up and on an unconfirmed sign-in) turned into the dashboard page's, `next` kept on this site.
 */
export function confirmationPageLink(libraryLink: string, dashboardUrl: string): string {
  const query = new URL(libraryLink).searchParams;
  const page = new URL(CONFIRM_PAGE, dashboardUrl);
  page.searchParams.set("token", query.get("token") ?? "");
  page.searchParams.set("next", safeNext(query.get("callbackURL")));
  return page.toString();
}

/**
 * A confirmation token's address and account, if the token is the library's (signed with the
 * auth secret), unexpired (24 h) and for a sign-up — not an address change.
 */
export async function readConfirmationToken(
  token: string,
  secret: string,
): Promise<{ email: string; userId: string } | null> {
  if (token === "") return null;
  const claims = await verifyJWT(token, secret);
  if (claims === null || typeof claims.email !== "string" || typeof claims.userId !== "string") return null;
  if (claims.updateTo !== undefined) return null;
  return { email: claims.email, userId: claims.userId };
}

/**
 * Confirming an address takes the mailed link **and** the account's password (pre-account
 * hijacking: whoever signed up first with an address chose the password; the address's owner
 * opening the link must not make that account usable — they reset the password instead). The
 * library's own GET `/verify-email` is disabled (auth.ts): a mail scanner fetching the link
 * confirms nothing. Each password tried here is an attempt on the account's sign-in counter.
 * A plain form POST (no JavaScript); every answer is a redirect: `next` once confirmed and
 * signed in, otherwise the page again with `?error=`. The token stays usable after a wrong
 * password (it is a signed claim, never consumed) until it expires.
 */
export function emailConfirmation(limit: AccountLimit): BetterAuthPlugin {
  return {
    id: "prim-email-confirmation",
    endpoints: {
      confirmEmailWithPassword: createAuthEndpoint(
        CONFIRM_PATH,
        {
          method: "POST",
          body: z.object({ token: z.string(), password: z.string(), next: z.string().optional() }),
          metadata: { allowedMediaTypes: ["application/x-www-form-urlencoded", "application/json"] },
        },
        async (ctx) => {
          const { token, password } = ctx.body;
          const next = safeNext(ctx.body.next);
          const back = (error: ConfirmError) =>
            ctx.redirect(`${CONFIRM_PAGE}?${new URLSearchParams({ token, next, error })}`);
          const claim = await readConfirmationToken(token, ctx.context.secret);
          if (claim === null) throw back("invalid_link");
          const verdict = await reserveAccountAttempt(limit, claim.email);
          if (!verdict.allowed) throw back("too_many_attempts");
          const found = await ctx.context.internalAdapter.findUserByEmail(claim.email, { includeAccounts: true });
          if (found === null || found.user.id !== claim.userId) {
            await releaseAccountAttempt(limit, claim.email);
            throw back("invalid_link");
          }
          // The library's own verifier over the account's credential hash (the sign-in's check).
          const hash = found.accounts.find(
            (a) => a.providerId === "credential" && a.accountId === found.user.id,
          )?.password;
          const right =
            typeof hash === "string" &&
            password.length <= MAX_PASSWORD &&
            (await ctx.context.password.verify({ hash, password }));
          if (!right) throw back("wrong_password"); // the reserved attempt stays counted
          await releaseAccountAttempt(limit, claim.email);
          if (!found.user.emailVerified) {
            await ctx.context.internalAdapter.updateUser(found.user.id, { emailVerified: true });
          }
          const session = await ctx.context.internalAdapter.createSession(found.user.id);
          await setSessionCookie(ctx, { session, user: { ...found.user, emailVerified: true } });
          throw ctx.redirect(next);
        },
      ),
    },
  };
}
