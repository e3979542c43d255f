import Link from "next/link";

/** An unknown address, or a workspace the user is not a member of (never told apart). */
export default function NotFound() {
  return (
    <section aria-labelledby="not-found-title" className="space-y-3">
      <h1 id="not-found-title" className="text-2xl font-semibold">
        Not found
      </h1>
      <p className="text-sm text-muted-foreground">There is nothing here, or it is not yours to see.</p>
      <Link href="/" className="text-sm underline underline-offset-4">
        All workspaces
      </Link>
    </section>
  );
}
