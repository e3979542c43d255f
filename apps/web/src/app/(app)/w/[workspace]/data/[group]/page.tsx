import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { Primitives } from "./primitives";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string; group: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { workspace, group } = await params;
  return workspaceMetadata(workspace, "data", decodeURIComponent(group));
}

/** One group's primitives (paged; create; delete: admins). */
export default async function GroupPage({ params }: Props) {
  const { workspace, group: raw } = await params;
  const group = decodeURIComponent(raw);
  const { ws } = await requireWorkspace(workspace, "data", `/w/${workspace}/data/${raw}`);
  return (
    <div className="space-y-6">
      <PageHeader title={group} description="The primitives of this group." />
      <Primitives workspace={workspace} group={group} admin={ws.role === "owner" || ws.role === "admin"} />
    </div>
  );
}
