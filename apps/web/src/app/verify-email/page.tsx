import type { Metadata } from "next";
import Link from "next/link";

export const metadata: Metadata = { title: "Check your email" };

type Props = { searchParams: Promise<{ email?: string }> };

/** After a sign-up: the account opens through the link mailed to the address. */
export default async function VerifyEmailPage({ searchParams }: Props) {
  const { email } = await searchParams;
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        Check your email
      </h1>
      <p className="mt-4 text-sm text-zinc-700">
        We sent a link to <span className="break-all font-medium">{email ?? "your address"}</span>. Open it and enter
        your password to confirm the address and sign in; it works for 24 hours.
      </p>
      <p className="mt-4 text-sm text-zinc-700">
        Nothing arrived? Look in the spam folder, or{" "}
        <Link href="/sign-in" className="underline">
          sign in
        </Link>{" "}
        with your password to get a new link.
      </p>
    </section>
  );
}
