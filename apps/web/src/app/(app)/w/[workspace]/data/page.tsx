import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { Groups } from "./groups";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "data");
}

/** The workspace's groups (data roles only; admins create them). */
export default async function DataPage({ params }: Props) {
  const { workspace } = await params;
  const { ws } = await requireWorkspace(workspace, "data", `/w/${workspace}/data`);
  return (
    <div className="space-y-6">
      <PageHeader
        title="Data"
        description="Groups hold your primitives: kv, db, fs, queue, storage, vault and memory."
      />
      <Groups workspace={workspace} admin={ws.role === "owner" || ws.role === "admin"} />
    </div>
  );
}
