import Link from "next/link";
import { currentUser } from "@/server/auth";
import { db } from "@/server/db";
import { primDb } from "@/server/prim";
import { CreateWorkspace } from "./create-workspace";

export const dynamic = "force-dynamic";

/** Home: sign in, or the workspaces the user belongs to. */
export default async function Home() {
  const user = await currentUser();
  if (user === null) {
    return (
      <section aria-labelledby="title" className="rounded-lg border bg-white p-6">
        <h1 id="title" className="text-2xl font-semibold">
          Prim
        </h1>
        <p className="mt-2 text-zinc-600">Hosted data primitives for developers and AI agents.</p>
        <div className="mt-4 flex gap-3">
          <Link href="/sign-in" className="rounded bg-zinc-900 px-4 py-2 text-white">
            Sign in
          </Link>
          <Link href="/sign-up" className="rounded border px-4 py-2">
            Create account
          </Link>
        </div>
      </section>
    );
  }
  const rows = await (await primDb()).workspacesOf(db(), user.id);
  return (
    <section aria-labelledby="title">
      <h1 id="title" className="text-2xl font-semibold">
        Workspaces
      </h1>
      <p className="text-sm text-zinc-600">
        Signed in as {user.email} ·{" "}
        <Link href="/account" className="underline">
          Account
        </Link>
      </p>
      {rows.length === 0 ? (
        <p className="mt-4 rounded border bg-white p-4">No workspaces yet.</p>
      ) : (
        <ul className="mt-4 divide-y rounded border bg-white">
          {rows.map((w) => (
            <li key={w.id} className="flex justify-between p-3">
              <Link href={`/w/${w.id}`} className="font-medium underline">
                {w.name}
              </Link>
              <span className="text-sm text-zinc-600">
                {w.plan} · {w.role}
              </span>
            </li>
          ))}
        </ul>
      )}
      <CreateWorkspace />
    </section>
  );
}
