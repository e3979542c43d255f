import Link from "next/link";
import { redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { UsagePanel } from "./usage-panel";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ workspace: string }> };

/** Usage against the plan and, for admins on Pro and up, the audit trail. */
export default async function UsagePage({ params }: Props) {
  const { workspace } = await params;
  if ((await currentUser()) === null) redirect(`/sign-in?next=${encodeURIComponent(`/w/${workspace}/usage`)}`);
  return (
    <div className="space-y-6">
      <Link href={`/w/${workspace}`} className="text-sm underline">
        Back to the workspace
      </Link>
      <h1 className="text-2xl font-semibold">Usage</h1>
      <UsagePanel workspace={workspace} />
    </div>
  );
}
