import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { nextCookies } from "better-auth/next-js";
import { headers } from "next/headers";
import { prismaClient } from "./db";
import { webEnv } from "./env";

async function create() {
  const env = webEnv();
  return betterAuth({
    baseURL: env.dashboardUrl,
    secret: env.authSecret,
    database: prismaAdapter(await prismaClient(), { provider: "postgresql" }),
    emailAndPassword: { enabled: true, minPasswordLength: 8, maxPasswordLength: 128, autoSignIn: true },
    session: { expiresIn: 7 * 24 * 3600, updateAge: 24 * 3600 },
    // On in every mode (the library's default is production only): sign-in and sign-up by
    // address, in memory per process.
    rateLimit: {
      enabled: true,
      window: 60,
      max: 300,
      customRules: {
        "/sign-in/email": { window: 60, max: env.PRIM_SIGN_IN_PER_MINUTE },
        "/sign-up/email": { window: 60, max: env.PRIM_SIGN_IN_PER_MINUTE },
      },
    },
    advanced: { useSecureCookies: env.dashboardUrl.startsWith("https://") },
    plugins: [nextCookies()],
  });
}

let instance: ReturnType<typeof create> | undefined;

/** The session library (better-auth over the control plane's Prisma client), made on first use. */
export function auth() {
  instance ??= create();
  return instance;
}

/** The signed-in user of this request, or null. */
export async function currentUser(): Promise<{ id: string; email: string; name: string } | null> {
  const session = await (await auth()).api.getSession({ headers: await headers() });
  return session === null ? null : { id: session.user.id, email: session.user.email, name: session.user.name };
}
