import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { AuditPanel } from "./audit-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "audit");
}

/** Audit: What was done in this workspace, by whom. */
export default async function Page({ params }: Props) {
  const { workspace } = await params;
  await requireWorkspace(workspace, "audit", `/w/${workspace}/audit`);
  return (
    <div className="space-y-6">
      <PageHeader title="Audit" description="What was done in this workspace, by whom." />
      <AuditPanel workspace={workspace} />
    </div>
  );
}
