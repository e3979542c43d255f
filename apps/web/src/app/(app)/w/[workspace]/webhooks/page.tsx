import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { EmptyState } from "@/components/ui/empty-state";
import { requireWorkspace, workspaceMetadata } from "@/server/workspace-page";
import { WebhooksPanel } from "./webhooks-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return workspaceMetadata((await params).workspace, "webhooks");
}

/** Webhooks: URLs that receive a group's or a primitive's changes (owners and admins; Pro and up). */
export default async function Page({ params }: Props) {
  const { workspace } = await params;
  const { ws } = await requireWorkspace(workspace, "webhooks", `/w/${workspace}/webhooks`);
  return (
    <div className="space-y-6">
      <PageHeader
        title="Webhooks"
        description="Each committed change of a group or a primitive sent to your URL, signed, at least once."
      />
      {ws.plan === "starter" ? (
        <EmptyState
          title="Webhooks need the Pro plan"
          description={
            <>
              Starter has the change feeds (<code className="font-mono text-xs">GET …/changes</code>, SSE, the SDK and
              MCP); delivering them to a URL is Pro's (403 <code className="font-mono text-xs">plan_limit</code> on
              Starter).
            </>
          }
          action={
            ws.role === "owner" ? (
              <Link href={`/w/${workspace}/billing`} className="font-medium underline underline-offset-4">
                Upgrade to Pro
              </Link>
            ) : (
              <span className="text-sm text-muted-foreground">An owner can upgrade the workspace on Billing.</span>
            )
          }
        />
      ) : (
        <WebhooksPanel workspace={workspace} />
      )}
    </div>
  );
}
