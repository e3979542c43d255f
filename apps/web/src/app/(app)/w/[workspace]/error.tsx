"use client";
import Link from "next/link";
import { useParams } from "next/navigation";
import { Button, buttonVariants } from "@/components/ui/button";

/** A workspace page that failed to render, inside the shell (the sidebar stays): what happened, and a way on. */
export default function WorkspacePageError({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  const { workspace } = useParams<{ workspace: string }>();
  return (
    <section aria-labelledby="error-title" className="space-y-3">
      <h1 id="error-title" className="text-2xl font-semibold">
        Something went wrong
      </h1>
      <p className="text-sm text-muted-foreground">
        This page could not be shown{error.digest === undefined ? "." : ` (reference ${error.digest}).`} Nothing you
        stored was changed.
      </p>
      <div className="flex gap-2">
        <Button variant="outline" onClick={reset}>
          Try again
        </Button>
        <Link href={`/w/${workspace}`} className={buttonVariants({ variant: "outline" })}>
          Overview
        </Link>
      </div>
    </section>
  );
}
