"use client";
import { type FormEvent, useState } from "react";
import { authClient } from "@/lib/auth-client";

/** Change the password (the current one first; other sessions are signed out); sign out. */
export function PasswordForm() {
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const result = await authClient.changePassword({
      currentPassword: String(form.get("current") ?? ""),
      newPassword: String(form.get("next") ?? ""),
      revokeOtherSessions: true,
    });
    setMessage(
      result.error
        ? {
            ok: false,
            text: "Could not change the password: check the current one; the new one needs 8 to 128 characters.",
          }
        : { ok: true, text: "Password changed. Other sessions were signed out." },
    );
  }
  return (
    <>
      <form onSubmit={submit} className="mt-4 space-y-3">
        <div>
          <label htmlFor="current" className="block text-sm font-medium">
            Current password
          </label>
          <input
            id="current"
            name="current"
            type="password"
            required
            autoComplete="current-password"
            className="mt-1 w-full rounded border p-2"
          />
        </div>
        <div>
          <label htmlFor="next" className="block text-sm font-medium">
            New password
          </label>
          <input
            id="next"
            name="next"
            type="password"
            required
            minLength={8}
            maxLength={128}
            autoComplete="new-password"
            className="mt-1 w-full rounded border p-2"
          />
        </div>
        <button type="submit" className="rounded bg-zinc-900 px-4 py-2 text-white">
          Change password
        </button>
        {message !== null && (
          <p
            id="password-message"
            role={message.ok ? "status" : "alert"}
            className={message.ok ? "text-sm" : "text-sm text-red-700"}
          >
            {message.text}
          </p>
        )}
      </form>
      <button
        type="button"
        className="mt-6 rounded border px-4 py-2"
        onClick={async () => {
          await authClient.signOut();
          window.location.assign("/sign-in");
        }}
      >
        Sign out
      </button>
    </>
  );
}
