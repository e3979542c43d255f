"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

const ROLES = ["owner", "admin", "member", "billing"] as const;

/**
 * Members and roles; admins change roles (an owner's only an owner) and remove, anyone leaves
 * (removal and leaving end that user's connected apps here).
 */
export function MembersPanel({ workspace, canManage, me }: { workspace: string; canManage: boolean; me: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.members.list.queryOptions({ workspace }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey({ workspace }) });
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSuccess: () => void refresh() }));
  const setRole = useMutation(trpc.members.setRole.mutationOptions({ onSuccess: () => void refresh() }));
  const leave = useMutation(
    trpc.members.leave.mutationOptions({
      onSuccess: () => {
        window.location.assign("/");
      },
    }),
  );
  return (
    <section aria-labelledby="members-title" className="rounded-lg border bg-white p-4">
      <h2 id="members-title" className="text-lg font-semibold">
        Members
      </h2>
      {list.isPending && <p className="text-sm text-zinc-600">Loading…</p>}
      <ErrorText error={list.error} prefix="Could not load members: " />
      <ul className="mt-2 divide-y text-sm">
        {list.data?.map((m) => (
          <li key={m.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
            <span>
              {m.email}{" "}
              {canManage && m.id !== me ? (
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  className="rounded border p-1"
                  onChange={(e) =>
                    setRole.mutate({ workspace, user: m.id, role: e.target.value as (typeof ROLES)[number] })
                  }
                >
                  {ROLES.map((role) => (
                    <option key={role} value={role}>
                      {role}
                    </option>
                  ))}
                </select>
              ) : (
                <span className="text-zinc-600">({m.role})</span>
              )}
            </span>
            {m.id === me ? (
              <button type="button" className="rounded border px-2 py-1" onClick={() => leave.mutate({ workspace })}>
                Leave
              </button>
            ) : (
              canManage && (
                <button
                  type="button"
                  className="rounded border px-2 py-1"
                  onClick={() => remove.mutate({ workspace, user: m.id })}
                  aria-label={`Remove ${m.email}`}
                >
                  Remove
                </button>
              )
            )}
          </li>
        ))}
      </ul>
      {(remove.isError || leave.isError || setRole.isError) && (
        <p role="alert" className="text-sm text-red-700">
          {remove.error?.message ?? leave.error?.message ?? setRole.error?.message}
        </p>
      )}
      {canManage && <Invitations workspace={workspace} />}
    </section>
  );
}

/** Invitations: a link for an email and a role (mailed to them and shown here), pending ones withdrawn. */
function Invitations({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [made, setMade] = useState<{ link: string; email: string; mailed: boolean } | null>(null);
  const pending = useQuery(trpc.members.invitations.queryOptions({ workspace }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.members.invitations.queryKey({ workspace }) });
  const invite = useMutation(
    trpc.members.invite.mutationOptions({
      onSuccess: (invitation) => {
        setMade({ link: invitation.link, email: invitation.email, mailed: invitation.mailed });
        void refresh();
      },
    }),
  );
  const withdraw = useMutation(trpc.members.revokeInvitation.mutationOptions({ onSuccess: () => void refresh() }));
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    invite.mutate({
      workspace,
      email: String(form.get("email") ?? ""),
      role: String(form.get("role")) as "member",
    });
  }
  return (
    <div className="mt-4 border-t pt-4">
      <h3 className="font-medium">Invite</h3>
      <form onSubmit={submit} className="mt-2 flex flex-wrap items-end gap-2 text-sm">
        <label>
          Email
          <input name="email" type="email" required className="mt-1 block rounded border p-1" />
        </label>
        <label>
          Role
          <select name="role" defaultValue="member" className="mt-1 block rounded border p-1">
            <option>member</option>
            <option>admin</option>
            <option>billing</option>
            <option>owner</option>
          </select>
        </label>
        <button type="submit" className="rounded bg-zinc-900 px-3 py-1 text-white">
          Send invitation
        </button>
      </form>
      <ErrorText error={invite.error} />
      {made !== null && (
        <p role="status" className="mt-2 break-all rounded border border-amber-300 bg-amber-50 p-2 text-sm">
          {made.mailed
            ? `We emailed the invitation to ${made.email}. You can also send them this link:`
            : `The mail to ${made.email} could not be sent. Send them this link:`}{" "}
          <code data-testid="invite-link">{made.link}</code>
        </p>
      )}
      <ul className="mt-2 divide-y text-sm">
        {pending.data?.map((i) => (
          <li key={i.id} className="flex items-center justify-between py-1">
            <span>
              {i.email} <span className="text-zinc-600">({i.role}, pending)</span>
            </span>
            <button
              type="button"
              className="rounded border px-2 py-0.5"
              aria-label={`Withdraw invitation for ${i.email}`}
              onClick={() => withdraw.mutate({ workspace, id: i.id })}
            >
              Withdraw
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
