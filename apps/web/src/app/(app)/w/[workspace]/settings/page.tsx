import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { RenameWorkspace } from "./rename-workspace";
import { SecretExportPanel } from "./secret-export-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "settings");
}

/** Settings (owners and admins): the name; owners: secret export (and, later, deletion). */
export default async function SettingsPage({ params }: Props) {
  const { workspace } = await params;
  const { ws } = await requireWorkspace(workspace, "settings", `/w/${workspace}/settings`);
  return (
    <div className="space-y-6">
      <PageHeader title="Settings" description={`${ws.plan} plan · you are ${ws.role}`} />
      <RenameWorkspace workspace={workspace} name={ws.name} />
      {ws.role === "owner" && <SecretExportPanel workspace={workspace} />}
      {/* DELETE WORKSPACE (helper H7): owners only —
          {ws.role === "owner" && <DeleteWorkspace workspace={workspace} name={ws.name} />}
          from "./delete-workspace" (settings/delete-workspace.tsx). */}
    </div>
  );
}
