import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { UsagePanel } from "./usage-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "usage");
}

/** Usage against the plan (every role; the audit log has its own page). */
export default async function UsagePage({ params }: Props) {
  const { workspace } = await params;
  await requireWorkspace(workspace, "usage", `/w/${workspace}/usage`);
  return (
    <div className="space-y-6">
      <PageHeader title="Usage" description="This month's operations, storage and primitives against your plan." />
      <UsagePanel workspace={workspace} />
    </div>
  );
}
