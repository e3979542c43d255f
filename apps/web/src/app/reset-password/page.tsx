import type { Metadata } from "next";
import Link from "next/link";
import { ResetPasswordForm } from "./reset-password-form";

export const metadata: Metadata = { title: "Reset password" };

type Props = { searchParams: Promise<{ token?: string; error?: string }> };

/** Where a mailed reset link lands (`?token=`, or `?error=INVALID_TOKEN` when it is used up or expired). */
export default async function ResetPasswordPage({ searchParams }: Props) {
  const { token, error } = await searchParams;
  const usable = token !== undefined && error === undefined;
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        Choose a new password
      </h1>
      {usable ? (
        <ResetPasswordForm token={token} />
      ) : (
        <p role="alert" className="mt-4 text-sm text-red-700">
          This link is used up or has expired.{" "}
          <Link href="/forgot-password" className="underline">
            Ask for a new one
          </Link>
          .
        </p>
      )}
    </section>
  );
}
