import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { PasswordForm } from "./password-form";

export const metadata: Metadata = { title: "Account" };

export const dynamic = "force-dynamic";

/** The signed-in user's account: password change, sign out. */
export default async function AccountPage() {
  const user = await currentUser();
  if (user === null) redirect("/sign-in?next=/account");
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6">
      <Link href="/" className="text-sm underline">
        Workspaces
      </Link>
      <h1 id="title" className="mt-2 text-xl font-semibold">
        Your account
      </h1>
      <p className="text-sm text-zinc-600">{user.email}</p>
      <PasswordForm />
    </section>
  );
}
