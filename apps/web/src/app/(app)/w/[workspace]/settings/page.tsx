import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { DeleteWorkspace } from "./delete-workspace";
import { RenameWorkspace } from "./rename-workspace";
import { SecretExportPanel } from "./secret-export-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "settings");
}

/** Settings (owners and admins): the name; owners: secret export and, in the Danger zone, deletion. */
export default async function SettingsPage({ params }: Props) {
  const { workspace } = await params;
  const { ws } = await requireWorkspace(workspace, "settings", `/w/${workspace}/settings`);
  return (
    <div className="space-y-6">
      <PageHeader title="Settings" description={`${ws.plan} plan · you are ${ws.role}`} />
      <RenameWorkspace workspace={workspace} name={ws.name} />
      {ws.role === "owner" && <SecretExportPanel workspace={workspace} />}
      {ws.role === "owner" && (
        <section aria-labelledby="danger-zone" className="space-y-3 pt-2">
          <h2 id="danger-zone" className="text-lg font-semibold text-destructive">
            Danger zone
          </h2>
          <DeleteWorkspace workspace={workspace} name={ws.name} />
        </section>
      )}
    </div>
  );
}
