import Link from "next/link";
import { CredentialsForm } from "./credentials-form";

const TEXT = {
  "sign-in": { title: "Sign in to Prim", other: "/sign-up", ask: "New here?", link: "Create an account" },
  "sign-up": { title: "Create your Prim account", other: "/sign-in", ask: "Have an account?", link: "Sign in" },
} as const;

/** The sign-in and sign-up pages: the form, and the way to the other one (keeping `next`). */
export function AuthPage({ mode, next }: { mode: "sign-in" | "sign-up"; next: string | undefined }) {
  const text = TEXT[mode];
  const query = next === undefined ? "" : `?next=${encodeURIComponent(next)}`;
  return (
    <section aria-labelledby="title" className="mx-auto max-w-sm rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        {text.title}
      </h1>
      <CredentialsForm mode={mode} next={next} />
      {mode === "sign-in" && (
        <p className="mt-4 text-sm">
          <Link href="/forgot-password" className="underline">
            Forgot your password?
          </Link>
        </p>
      )}
      <p className="mt-4 text-sm">
        {text.ask}{" "}
        <Link href={`${text.other}${query}`} className="underline">
          {text.link}
        </Link>
      </p>
    </section>
  );
}
