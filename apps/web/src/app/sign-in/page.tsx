import Link from "next/link";
import { CredentialsForm } from "./credentials-form";

type Props = { searchParams: Promise<{ next?: string }> };

export default async function SignInPage({ searchParams }: Props) {
  const { next } = await searchParams;
  const query = next === undefined ? "" : `?next=${encodeURIComponent(next)}`;
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        Sign in to Prim
      </h1>
      <CredentialsForm mode="sign-in" next={next} />
      <p className="mt-4 text-sm">
        New here?{" "}
        <Link href={`/sign-up${query}`} className="underline">
          Create an account
        </Link>
      </p>
    </section>
  );
}
