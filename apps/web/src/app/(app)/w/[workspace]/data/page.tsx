import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { membership } from "@/server/db";
import { DataBrowser } from "./data-browser";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

/** Groups, their primitives and the kv browser of one workspace (data roles only). */
export default async function DataPage({ params }: Props) {
  const { workspace } = await params;
  const user = await currentUser();
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(`/w/${workspace}/data`)}`);
  const ws = await membership(workspace, user.id);
  if (ws === null || ws.role === "billing") notFound();
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
