import type { Metadata } from "next";
import Link from "next/link";
import { safeNext } from "@/lib/safe-next";
import { CONFIRM_PATH, readConfirmationToken } from "@/server/email-confirmation";
import { webEnv } from "@/server/env";

export const metadata: Metadata = { title: "Confirm your email" };

export const dynamic = "force-dynamic";

type Props = { searchParams: Promise<{ token?: string; next?: string; error?: string }> };

const ERRORS: Record<string, string> = {
  wrong_password: "Wrong password. Enter the one you chose when you created the account.",
  too_many_attempts: "Too many attempts. Wait a few minutes, or reset the password instead.",
};

/**
 * Where a mailed confirmation link lands. Opening it confirms nothing (mail scanners fetch
 * links): the account's password, posted by a plain form to `/api/auth/confirm-email`, does.
 * Whoever did not create the account resets its password instead (which proves the address).
 */
export default async function ConfirmEmailPage({ searchParams }: Props) {
  const { token = "", next, error } = await searchParams;
  const claim = await readConfirmationToken(token, webEnv().authSecret);
  if (claim === null || error === "invalid_link") {
    return (
      <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
        <h1 id="title" className="text-xl font-semibold">
          Confirm your email address
        </h1>
        <p role="alert" className="mt-4 text-sm text-red-700">
          This link is not valid or has expired (links work for 24 hours).
        </p>
        <p className="mt-4 text-sm text-zinc-700">
          <Link href="/sign-in" className="underline">
            Sign in
          </Link>{" "}
          with your password to get a new link, or{" "}
          <Link href="/forgot-password" className="underline">
            reset the password
          </Link>
          .
        </p>
      </section>
    );
  }
  const message = error === undefined ? undefined : ERRORS[error];
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        Confirm your email address
      </h1>
      <div className="mt-4 rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950">
        <p className="font-semibold">Didn't create this account?</p>
        <p className="mt-1">
          Someone may have signed up with your address.{" "}
          <Link href="/forgot-password" className="font-semibold underline">
            Reset its password instead
          </Link>
          : the account becomes yours and their password stops working.
        </p>
      </div>
      <form
        method="post"
        action={`/api/auth${CONFIRM_PATH}`}
        className="mt-6 space-y-4"
        aria-describedby={message ? "form-error" : undefined}
      >
        <input type="hidden" name="token" value={token} />
        <input type="hidden" name="next" value={safeNext(next)} />
        <div>
          <label htmlFor="password" className="block text-sm font-medium">
            Password
          </label>
          <p id="password-hint" className="mt-1 text-sm text-zinc-700">
            Enter the password you chose to confirm <span className="break-all font-medium">{claim.email}</span>.
          </p>
          <input
            id="password"
            name="password"
            type="password"
            required
            maxLength={128}
            autoComplete="current-password"
            aria-describedby="password-hint"
            className="mt-2 w-full rounded border p-2"
          />
        </div>
        {message !== undefined && (
          <p id="form-error" role="alert" className="text-sm text-red-700">
            {message}
          </p>
        )}
        <button type="submit" className="rounded bg-zinc-900 px-4 py-2 text-white">
          Confirm and sign in
        </button>
      </form>
    </section>
  );
}
