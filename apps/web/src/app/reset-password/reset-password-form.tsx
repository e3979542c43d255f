"use client";
import Link from "next/link";
import { type FormEvent, useState } from "react";
import { authClient } from "@/lib/auth-client";
import { useHydrated } from "@/lib/use-hydrated";

export function ResetPasswordForm({ token }: { token: string }) {
  const [state, setState] = useState<"idle" | "busy" | "done" | "failed">("idle");
  const hydrated = useHydrated();
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const newPassword = String(new FormData(event.currentTarget).get("password") ?? "");
    setState("busy");
    const result = await authClient.resetPassword({ newPassword, token });
    setState(result.error ? "failed" : "done");
  }
  if (state === "done") {
    return (
      <p role="status" className="mt-4 text-sm">
        Password changed; other sessions were signed out.{" "}
        <Link href="/sign-in" className="underline">
          Sign in
        </Link>{" "}
        with the new one.
      </p>
    );
  }
  return (
    <form method="post" onSubmit={submit} className="mt-6 space-y-4">
      <div>
        <label htmlFor="password" className="block text-sm font-medium">
          New password
        </label>
        <input
          id="password"
          name="password"
          type="password"
          required
          minLength={8}
          maxLength={128}
          autoComplete="new-password"
          className="mt-1 w-full rounded border p-2"
        />
      </div>
      {state === "failed" && (
        <p role="alert" className="text-sm text-red-700">
          Could not change the password: the link may be used up or expired, and the password needs 8 to 128 characters.
        </p>
      )}
      <button
        type="submit"
        disabled={state === "busy" || !hydrated}
        className="rounded bg-zinc-900 px-4 py-2 text-white disabled:opacity-50"
      >
        Set password
      </button>
    </form>
  );
}
