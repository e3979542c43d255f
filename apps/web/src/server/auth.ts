import type { SignInAttempts } from "@prim/db";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { nextCookies } from "better-auth/next-js";
import { headers } from "next/headers";
import { CLIENT_ADDRESS_HEADER } from "./client-address";
import { prismaClient } from "./db";
import { CONFIRM_PATH, confirmationPageLink, emailConfirmation } from "./email-confirmation";
import { webEnv } from "./env";
import { sendMail } from "./mail";
import { existingAccountMail, resetMail, verificationMail } from "./mail-messages";
import { primDb } from "./prim";
import { withHashedSessionTokens } from "./session-tokens";
import { type AccountLimit, accountSignInLimit, clearSignInFailures } from "./sign-in-limit";

let attempts: Promise<SignInAttempts> | undefined;

async function create() {
  const env = webEnv();
  const prisma = await prismaClient();
  const accountLimit: AccountLimit = {
    attempts: () => {
      attempts ??= primDb().then((db) => new db.SignInAttempts(env.REDIS_URL));
      return attempts;
    },
    max: env.PRIM_SIGN_IN_FAILURES_PER_ACCOUNT,
    windowSeconds: env.PRIM_SIGN_IN_FAILURE_WINDOW_SECONDS,
    secret: env.authSecret,
  };
  return betterAuth({
    baseURL: env.dashboardUrl,
    secret: env.authSecret,
    // Session tokens at rest are their sha256 (session-tokens.ts).
    database: withHashedSessionTokens(prismaAdapter(prisma, { provider: "postgresql" })),
    // Routes that hand a browser its other sessions' tokens or take them back: none in the
    // dashboard, and listed sessions carry only their hash (session-tokens.ts). The library's
    // GET /verify-email confirms an address by the link alone: here it takes the account's
    // password too (email-confirmation.ts).
    disabledPaths: ["/list-sessions", "/revoke-session", "/revoke-sessions", "/revoke-other-sessions", "/verify-email"],
    emailAndPassword: {
      enabled: true,
      minPasswordLength: 8,
      maxPasswordLength: 128,
      // A new account signs in only once its address is confirmed through the mailed link; a
      // sign-up with a known address then answers exactly as for a new one (its owner gets a
      // mail instead), so the form never tells whether an address has an account.
      requireEmailVerification: true,
      onExistingUserSignUp: async ({ user }) => sendMail(existingAccountMail(user.email, env.dashboardUrl)),
      sendResetPassword: async ({ user, url }) => sendMail(resetMail(user.email, url)),
      resetPasswordTokenExpiresIn: 3600,
      revokeSessionsOnPasswordReset: true,
      onPasswordReset: async ({ user }) => {
        // The link came through the mailbox: the address is proven, and a locked account opens.
        await prisma.user.update({ where: { id: user.id }, data: { emailVerified: true } });
        await clearSignInFailures(accountLimit, user.email);
      },
    },
    emailVerification: {
      // The link opens the dashboard's page that asks for the account's password (email-confirmation.ts).
      sendVerificationEmail: async ({ user, url }) =>
        sendMail(verificationMail(user.email, confirmationPageLink(url, env.dashboardUrl))),
      sendOnSignUp: true,
      // An unconfirmed account's right password mails a fresh link (the old one may have expired).
      sendOnSignIn: true,
      expiresIn: 24 * 3600,
    },
    session: { expiresIn: 7 * 24 * 3600, updateAge: 24 * 3600 },
    // Password-reset tokens are kept as their sha256 (confirmation links are signed, not stored).
    verification: { storeIdentifier: "hashed" },
    // On in every mode (the library's default is production only): sign-in and sign-up by
    // client address, in memory per process; failed sign-ins per account in Redis (the plugin).
    rateLimit: {
      enabled: true,
      window: 60,
      max: 300,
      customRules: {
        "/sign-in/email": { window: 60, max: env.PRIM_SIGN_IN_PER_MINUTE },
        "/sign-up/email": { window: 60, max: env.PRIM_SIGN_IN_PER_MINUTE },
        [CONFIRM_PATH]: { window: 60, max: env.PRIM_SIGN_IN_PER_MINUTE },
      },
    },
    advanced: {
      useSecureCookies: env.dashboardUrl.startsWith("https://"),
      // The library's default is X-Forwarded-For, which any client can write: only the header
      // the auth route sets (client-address.ts: the trusted proxy's, or the socket's) counts.
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
    },
    plugins: [accountSignInLimit(accountLimit), emailConfirmation(accountLimit), nextCookies()],
  });
}

let instance: ReturnType<typeof create> | undefined;

/** The session library (better-auth over the control plane's Prisma client), made on first use. */
export function auth() {
  instance ??= create();
  return instance;
}

/** The signed-in user of this request, or null. */
export async function currentUser(): Promise<{
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
} | null> {
  const session = await (await auth()).api.getSession({ headers: await headers() });
  return session === null
    ? null
    : {
        id: session.user.id,
        email: session.user.email,
        name: session.user.name,
        emailVerified: session.user.emailVerified,
      };
}
