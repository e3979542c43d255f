import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { primBilling } from "@/server/prim";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { BillingPanel } from "./billing-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }>; searchParams: Promise<{ checkout?: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "billing");
}

/** Billing (owners and billing admins; others: not found): plan, usage, overage, upgrade, invoices. */
export default async function BillingPage({ params, searchParams }: Props) {
  const { workspace } = await params;
  const { checkout } = await searchParams;
  await requireWorkspace(workspace, "billing", `/w/${workspace}/billing`);
  // What each plan includes: @prim/billing's one list (server side: the client never loads it).
  const { PLAN_FEATURES } = await primBilling();
  return (
    <div className="space-y-6">
      <PageHeader title="Billing" description="Your plan, this month's usage against it, and invoices." />
      <BillingPanel workspace={workspace} checkout={checkout} plans={PLAN_FEATURES} />
    </div>
  );
}
