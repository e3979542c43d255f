import Link from "next/link";
import { CredentialsForm } from "../sign-in/credentials-form";

type Props = { searchParams: Promise<{ next?: string }> };

export default async function SignUpPage({ searchParams }: Props) {
  const { next } = await searchParams;
  const query = next === undefined ? "" : `?next=${encodeURIComponent(next)}`;
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        Create your Prim account
      </h1>
      <CredentialsForm mode="sign-up" next={next} />
      <p className="mt-4 text-sm">
        Have an account?{" "}
        <Link href={`/sign-in${query}`} className="underline">
          Sign in
        </Link>
      </p>
    </section>
  );
}
