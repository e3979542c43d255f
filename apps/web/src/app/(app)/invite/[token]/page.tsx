import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { db } from "@/server/db";
import { primDb } from "@/server/prim";
import { AcceptInvitation } from "./accept";

export const metadata: Metadata = { title: "Invitation" };

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ token: string }> };

/** An invitation link: which workspace and role, accepted by the signed-in invitee. */
export default async function InvitePage({ params }: Props) {
  const { token } = await params;
  const user = await currentUser();
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(`/invite/${token}`)}`);
  let invitation: Awaited<ReturnType<Awaited<ReturnType<typeof primDb>>["describeInvitation"]>>;
  try {
    invitation = await (await primDb()).describeInvitation(db(), token);
  } catch {
    return (
      <section className="rounded-lg border bg-white p-6">
        <h1 className="text-xl font-semibold">This invitation is no longer valid</h1>
        <p className="mt-2 text-zinc-600">It was used, withdrawn or has expired. Ask for a new link.</p>
      </section>
    );
  }
  return (
    <section aria-labelledby="title" className="rounded-lg border bg-white p-6">
      <h1 id="title" className="text-xl font-semibold">
        Join {invitation.workspace_name}
      </h1>
      <p className="mt-2 text-zinc-600">
        You are invited as <span className="font-medium">{invitation.role}</span> ({invitation.email}). You are signed
        in as {user.email}.
      </p>
      <AcceptInvitation token={token} />
    </section>
  );
}
