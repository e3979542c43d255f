import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { canSee, WORKSPACE_PAGES, workspaceHref } from "@/lib/workspace-nav";
import type { Membership } from "@/server/db";

/**
 * The workspace's Overview — a placeholder: helper H2 replaces this file (Connect, next steps).
 * Every role sees it (billing users too: nothing of the data here).
 */
export function Overview({ workspace, ws }: { workspace: string; ws: Membership }) {
  const pages = WORKSPACE_PAGES.filter((p) => p.id !== "overview" && canSee(ws.role, p.id));
  return (
    <div className="space-y-6">
      <PageHeader title={ws.name} description={`${ws.plan} plan · you are ${ws.role}`} />
      <div className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3">
        {pages.map((p) => (
          <Card key={p.id}>
            <CardHeader>
              <CardTitle>
                <Link href={workspaceHref(workspace, p.id)} className="hover:underline">
                  {p.title}
                </Link>
              </CardTitle>
              <CardDescription>Open {p.title.toLowerCase()}.</CardDescription>
            </CardHeader>
            <CardContent />
          </Card>
        ))}
      </div>
    </div>
  );
}
