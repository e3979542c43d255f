import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { EmptyState } from "@/components/ui/empty-state";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { AuditPanel } from "./audit-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "audit");
}

/** Audit: what was done in this workspace, by whom (owners and admins; Pro and up keep it 30 days). */
export default async function Page({ params }: Props) {
  const { workspace } = await params;
  const { ws } = await requireWorkspace(workspace, "audit", `/w/${workspace}/audit`);
  return (
    <div className="space-y-6">
      <PageHeader
        title="Audit"
        description="What was done in this workspace, by whom: data calls and the workspace's own changes, 30 days."
      />
      {ws.plan === "starter" ? (
        <EmptyState
          title="The audit log needs the Pro plan"
          description="On Starter the audit log cannot be read (403 plan_limit). Pro keeps 30 days of it."
          action={
            ws.role === "owner" ? (
              <Link href={`/w/${workspace}/billing`} className="font-medium underline underline-offset-4">
                Upgrade to Pro
              </Link>
            ) : undefined
          }
        />
      ) : (
        <AuditPanel workspace={workspace} />
      )}
    </div>
  );
}
