import type { Metadata } from "next";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { PrimitiveView } from "./primitive-view";

export const dynamic = "force-dynamic";

type Props = {
  params: Promise<{ workspace: string; group: string; primitive: string }>;
  searchParams: Promise<{ tab?: string }>;
};

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { workspace, group } = await params;
  return workspaceMetadata(workspace, "data", decodeURIComponent(group));
}

/** One primitive (`[primitive]` is its id) with its tabs in `?tab=`: browse | sql (db) | snapshots | settings. */
export default async function PrimitivePage({ params, searchParams }: Props) {
  const { workspace, group, primitive } = await params;
  const { tab } = await searchParams;
  const { ws } = await requireWorkspace(workspace, "data", `/w/${workspace}/data/${group}/${primitive}`);
  return (
    <PrimitiveView
      workspace={workspace}
      group={decodeURIComponent(group)}
      primitive={primitive}
      tab={tab}
      admin={ws.role === "owner" || ws.role === "admin"}
    />
  );
}
