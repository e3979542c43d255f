import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { ConnectionsPanel } from "./connections-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "apps");
}

/** Apps: Apps connected through OAuth (MCP clients) and what they may use. */
export default async function Page({ params }: Props) {
  const { workspace } = await params;
  await requireWorkspace(workspace, "apps", `/w/${workspace}/apps`);
  return (
    <div className="space-y-6">
      <PageHeader title="Apps" description="Apps connected through OAuth (MCP clients) and what they may use." />
      <ConnectionsPanel workspace={workspace} />
    </div>
  );
}
