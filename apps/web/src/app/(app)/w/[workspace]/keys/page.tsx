import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { KeysPanel } from "./keys-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "keys");
}

/** Keys: API keys for the REST API, the SDK and MCP clients. */
export default async function Page({ params }: Props) {
  const { workspace } = await params;
  const { ws } = await requireWorkspace(workspace, "keys", `/w/${workspace}/keys`);
  const admin = ws.role === "owner" || ws.role === "admin";
  return (
    <div className="space-y-6">
      <PageHeader title="Keys" description="API keys for the REST API, the SDK and MCP clients." />
      <KeysPanel workspace={workspace} canManage={admin} />
    </div>
  );
}
