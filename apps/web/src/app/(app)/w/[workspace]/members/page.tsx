import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { MembersPanel } from "./members-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "members");
}

/** Members: Who is in this workspace, their roles and pending invitations. */
export default async function Page({ params }: Props) {
  const { workspace } = await params;
  const { user, ws } = await requireWorkspace(workspace, "members", `/w/${workspace}/members`);
  const admin = ws.role === "owner" || ws.role === "admin";
  return (
    <div className="space-y-6">
      <PageHeader title="Members" description="Who is in this workspace, their roles and pending invitations." />
      <MembersPanel workspace={workspace} canManage={admin} me={user.id} />
    </div>
  );
}
