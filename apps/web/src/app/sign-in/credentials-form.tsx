"use client";
import { type FormEvent, useState } from "react";
import { authClient } from "@/lib/auth-client";
import { safeNext } from "@/lib/safe-next";
import { useHydrated } from "@/lib/use-hydrated";

/**
 * Email and password, for signing in or up. Messages never tell whether an address has an
 * account: a sign-up always answers "check your email" (a new address gets the confirmation
 * link, a known one a note to its owner). Too many attempts get the library's 429.
 */
export function CredentialsForm({ mode, next }: { mode: "sign-in" | "sign-up"; next: string | undefined }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  // onSubmit rather than a form action: an action resets the form, and a mistyped password
  // should not cost the user the address they typed.
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const email = String(form.get("email") ?? "");
    const password = String(form.get("password") ?? "");
    // Where the mailed confirmation link signs the user in and sends them.
    const callbackURL = safeNext(next);
    const result =
      mode === "sign-in"
        ? await authClient.signIn.email({ email, password, callbackURL })
        : await authClient.signUp.email({
            email,
            password,
            name: String(form.get("name") || email.split("@")[0]),
            callbackURL,
          });
    setBusy(false);
    if (result.error) {
      const status = result.error.status;
      setError(
        status === 429
          ? "Too many attempts. Wait a few minutes and try again."
          : status === 403
            ? `Confirm your email address first: we sent a new link to ${email}.`
            : mode === "sign-in"
              ? "Wrong email or password."
              : "Could not create the account. Check the address, and use a password of 8 to 128 characters.",
      );
      return;
    }
    if (mode === "sign-up") {
      window.location.assign(`/verify-email?email=${encodeURIComponent(email)}`);
      return;
    }
    window.location.assign(callbackURL);
  }
  return (
    <form
      method="post"
      onSubmit={submit}
      className="mt-6 space-y-4"
      aria-describedby={error ? "form-error" : undefined}
    >
      {mode === "sign-up" && (
        <div>
          <label htmlFor="name" className="block text-sm font-medium">
            Name
          </label>
          <input id="name" name="name" autoComplete="name" className="mt-1 w-full rounded border p-2" />
        </div>
      )}
      <div>
        <label htmlFor="email" className="block text-sm font-medium">
          Email
        </label>
        <input
          id="email"
          name="email"
          type="email"
          required
          autoComplete="email"
          className="mt-1 w-full rounded border p-2"
        />
      </div>
      <div>
        <label htmlFor="password" className="block text-sm font-medium">
          Password
        </label>
        <input
          id="password"
          name="password"
          type="password"
          required
          minLength={8}
          maxLength={128}
          autoComplete={mode === "sign-in" ? "current-password" : "new-password"}
          className="mt-1 w-full rounded border p-2"
        />
      </div>
      {error !== null && (
        <p id="form-error" role="alert" className="text-sm text-red-700">
          {error}
        </p>
      )}
      <button
        type="submit"
        disabled={busy || !hydrated}
        className="rounded bg-zinc-900 px-4 py-2 text-white disabled:opacity-50"
      >
        {mode === "sign-in" ? "Sign in" : "Create account"}
      </button>
    </form>
  );
}
