import type { Metadata } from "next";
import Link from "next/link";
import { ForgotPasswordForm } from "./forgot-password-form";

export const metadata: Metadata = { title: "Forgot password" };

/** Asks for a password reset link (mailed; the answer is the same whether the address has an account). */
export default function ForgotPasswordPage() {
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        Reset your password
      </h1>
      <p className="mt-2 text-sm text-zinc-700">We will mail you a link to choose a new one.</p>
      <ForgotPasswordForm />
      <p className="mt-4 text-sm">
        <Link href="/sign-in" className="underline">
          Back to sign in
        </Link>
      </p>
    </section>
  );
}
