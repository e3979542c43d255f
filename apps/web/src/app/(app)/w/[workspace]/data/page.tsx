import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { db } from "@/server/db";
import { DataBrowser } from "./data-browser";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

/** Groups, their primitives and the kv browser of one workspace (data roles only). */
export default async function DataPage({ params }: Props) {
  const { workspace } = await params;
  const user = await currentUser();
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(`/w/${workspace}/data`)}`);
  const { rows } = await db().query<{ name: string; role: string }>(
    `SELECT w.name, m.role FROM members m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.workspace_id = $1 AND m.user_id = $2`,
    [workspace, user.id],
  );
  const ws = rows[0];
  if (ws === undefined || ws.role === "billing") notFound();
  return (
    <div className="space-y-6">
      <header>
        <Link href={`/w/${workspace}`} className="text-sm underline">
          {ws.name}
        </Link>
        <h1 className="mt-2 text-2xl font-semibold">Data</h1>
      </header>
      <DataBrowser workspace={workspace} admin={ws.role === "owner" || ws.role === "admin"} />
    </div>
  );
}
