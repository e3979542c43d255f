import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { membership } from "@/server/db";
import { ConnectionsPanel } from "./connections-panel";
import { KeysPanel } from "./keys-panel";
import { MembersPanel } from "./members-panel";
import { RenameWorkspace } from "./rename-workspace";
import { SecretExportPanel } from "./secret-export-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

/** One workspace: its API keys, members, connected apps and owners' settings (each panel per the user's role). */
export default async function WorkspacePage({ params }: Props) {
  const { workspace } = await params;
  const user = await currentUser();
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(`/w/${workspace}`)}`);
  const ws = await membership(workspace, user.id);
  if (ws === null) notFound();
  const admin = ws.role === "owner" || ws.role === "admin";
  const data = ws.role !== "billing";
  const billing = ws.role === "owner" || ws.role === "billing";
  return (
    <div className="space-y-8">
      <header>
        <Link href="/" className="text-sm underline">
          All workspaces
        </Link>
        <h1 className="mt-2 text-2xl font-semibold">{ws.name}</h1>
        <p className="text-sm text-zinc-600">
          {ws.plan} plan · you are {ws.role}
        </p>
        {admin && <RenameWorkspace workspace={workspace} name={ws.name} />}
        <nav aria-label="Workspace" className="mt-2 flex gap-2 text-sm">
          {data && (
            <Link href={`/w/${workspace}/data`} className="rounded border px-3 py-1">
              Data
            </Link>
          )}
          <Link href={`/w/${workspace}/usage`} className="rounded border px-3 py-1">
            Usage
          </Link>
          {billing && (
            <Link href={`/w/${workspace}/billing`} className="rounded border px-3 py-1">
              Billing
            </Link>
          )}
        </nav>
      </header>
      {data && <KeysPanel workspace={workspace} canManage={admin} />}
      {data && <ConnectionsPanel workspace={workspace} />}
      <MembersPanel workspace={workspace} canManage={admin} me={user.id} />
      {ws.role === "owner" && <SecretExportPanel workspace={workspace} />}
    </div>
  );
}
