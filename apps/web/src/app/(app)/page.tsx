import type { Metadata } from "next";
import Link from "next/link";
import { ThemeToggle } from "@/components/theme-toggle";
import { Badge } from "@/components/ui/badge";
import { buttonVariants } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { currentUser } from "@/server/auth";
import { db } from "@/server/db";
import { primDb } from "@/server/prim";
import { CreateWorkspace } from "./create-workspace";

export const metadata: Metadata = { title: "Workspaces" };

export const dynamic = "force-dynamic";

/** Home: sign in, or the workspaces the user belongs to. */
export default async function Home() {
  const user = await currentUser();
  if (user === null) {
    return (
      <section aria-labelledby="title" className="rounded-lg border bg-card p-6">
        <h1 id="title" className="text-2xl font-semibold">
          Prim
        </h1>
        <p className="mt-2 text-muted-foreground">Hosted data primitives for developers and AI agents.</p>
        <div className="mt-4 flex gap-3">
          <Link href="/sign-in" className={buttonVariants()}>
            Sign in
          </Link>
          <Link href="/sign-up" className={buttonVariants({ variant: "outline" })}>
            Create account
          </Link>
        </div>
      </section>
    );
  }
  const rows = await (await primDb()).workspacesOf(db(), user.id);
  return (
    <section aria-labelledby="title" className="space-y-6">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 id="title" className="text-2xl font-semibold tracking-tight">
            Workspaces
          </h1>
          <p className="mt-1 text-sm text-muted-foreground">
            Signed in as {user.email} ·{" "}
            <Link href="/account" className="underline underline-offset-4">
              Account
            </Link>
          </p>
        </div>
        <ThemeToggle />
      </div>
      {rows.length === 0 ? (
        <EmptyState title="No workspaces yet" description="Create one below: it holds your groups, keys and members." />
      ) : (
        <ul className="divide-y rounded-lg border bg-card">
          {rows.map((w) => (
            <li key={w.id}>
              <Link
                href={`/w/${w.id}`}
                className="flex items-center justify-between gap-3 p-4 outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
              >
                <span className="min-w-0 truncate font-medium">{w.name}</span>
                <span className="flex shrink-0 gap-1.5">
                  <Badge variant="secondary">{w.plan}</Badge>
                  <Badge variant="outline">{w.role}</Badge>
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
      <CreateWorkspace />
    </section>
  );
}
