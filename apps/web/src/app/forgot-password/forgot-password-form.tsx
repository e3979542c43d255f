"use client";
import { type FormEvent, useState } from "react";
import { authClient } from "@/lib/auth-client";
import { useHydrated } from "@/lib/use-hydrated";

export function ForgotPasswordForm() {
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget).get("email") ?? "");
    setBusy(true);
    const result = await authClient.requestPasswordReset({ email, redirectTo: "/reset-password" });
    setBusy(false);
    setMessage(
      result.error
        ? {
            ok: false,
            text:
              result.error.status === 429
                ? "Too many attempts. Wait a few minutes and try again."
                : "Could not send the link. Check the address.",
          }
        : { ok: true, text: `If ${email} has a Prim account, a link to reset its password is on its way.` },
    );
  }
  return (
    <form method="post" onSubmit={submit} className="mt-6 space-y-4">
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
      {message !== null && (
        <p role={message.ok ? "status" : "alert"} className={message.ok ? "text-sm" : "text-sm text-red-700"}>
          {message.text}
        </p>
      )}
      <button
        type="submit"
        disabled={busy || !hydrated}
        className="rounded bg-zinc-900 px-4 py-2 text-white disabled:opacity-50"
      >
        Send the link
      </button>
    </form>
  );
}
