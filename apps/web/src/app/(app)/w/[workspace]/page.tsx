import type { Metadata } from "next";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { Overview } from "./overview";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "overview");
}

/** The workspace's Overview (every role). */
export default async function WorkspacePage({ params }: Props) {
  const { workspace } = await params;
  const { ws } = await requireWorkspace(workspace, "overview");
  return <Overview workspace={workspace} ws={ws} />;
}
