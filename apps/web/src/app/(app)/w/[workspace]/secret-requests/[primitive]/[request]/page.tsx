import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { SecretRequestPanel } from "./secret-request-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string; primitive: string; request: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "data", "Secret request");
}

/**
 * A secret request: the page an agent's URL elicitation (`vault_request_secret`) opens. Signed
 * in, a member of the workspace; an owner or admin sets the value (straight into the vault) or
 * declines.
 */
export default async function Page({ params }: Props) {
  const { workspace, primitive, request } = await params;
  await requireWorkspace(workspace, "data", `/w/${workspace}/secret-requests/${primitive}/${request}`);
  return (
    <div className="mx-auto max-w-2xl space-y-6">
      <PageHeader
        title="Secret request"
        description="An agent asks for a secret. The value you type goes straight into the vault; the agent never sees it."
      />
      <SecretRequestPanel workspace={workspace} primitive={primitive} request={request} />
    </div>
  );
}
