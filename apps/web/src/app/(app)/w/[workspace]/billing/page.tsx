import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { membership } from "@/server/db";
import { BillingPanel } from "./billing-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }>; searchParams: Promise<{ checkout?: string }> };

/** Billing (owners and billing admins; others: not found): plan, usage, overage, upgrade, invoices. */
export default async function BillingPage({ params, searchParams }: Props) {
  const { workspace } = await params;
  const { checkout } = await searchParams;
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
      <BillingPanel workspace={workspace} checkout={checkout} />
    </div>
  );
}
