"use client";
import Link from "next/link";

/** A page of the signed-in area that failed to render: what happened, and a way on. */
export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <section aria-labelledby="error-title" className="space-y-3">
      <h1 id="error-title" className="text-2xl font-semibold">
        Something went wrong
      </h1>
      <p className="text-sm text-muted-foreground">
        This page could not be shown{error.digest === undefined ? "." : ` (reference ${error.digest}).`} Nothing you
        stored was changed.
      </p>
      <div className="flex gap-2 text-sm">
        <button type="button" onClick={reset} className="rounded-md border bg-background px-3 py-1 hover:bg-accent">
          Try again
        </button>
        <Link href="/" className="rounded-md border bg-background px-3 py-1 hover:bg-accent">
          All workspaces
        </Link>
      </div>
    </section>
  );
}
