import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { membership } from "@/server/db";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

/** The workspace's plan, for its owners and billing admins (others: not found). */
export default async function BillingPage({ params }: Props) {
  const { workspace } = await params;
  const user = await currentUser();
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(`/w/${workspace}/billing`)}`);
  const ws = await membership(workspace, user.id);
  if (ws === null || (ws.role !== "owner" && ws.role !== "billing")) notFound();
  return (
    <div className="space-y-6">
      <Link href={`/w/${workspace}`} className="text-sm underline">
        Back to the workspace
      </Link>
      <h1 className="text-2xl font-semibold">Billing</h1>
      <section aria-labelledby="plan-title" className="rounded-lg border bg-white p-4 text-sm">
        <h2 id="plan-title" className="text-lg font-semibold">
          {ws.name}: {ws.plan} plan
        </h2>
        <p className="mt-2">
          Usage against the plan is on the{" "}
          <Link href={`/w/${workspace}/usage`} className="underline">
            usage page
          </Link>
          .
        </p>
      </section>
    </div>
  );
}
