"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";

/** Members and roles; admins remove, anyone leaves (either ends that user's connected apps here). */
export function MembersPanel({ workspace, canManage, me }: { workspace: string; canManage: boolean; me: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.members.list.queryOptions({ workspace }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey({ workspace }) });
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSuccess: () => void refresh() }));
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
      {list.isError && (
        <p role="alert" className="text-sm text-red-700">
          Could not load members: {list.error.message}
        </p>
      )}
      <ul className="mt-2 divide-y text-sm">
        {list.data?.map((m) => (
          <li key={m.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
            <span>
              {m.email} <span className="text-zinc-600">({m.role})</span>
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
      {(remove.isError || leave.isError) && (
        <p role="alert" className="text-sm text-red-700">
          {remove.error?.message ?? leave.error?.message}
        </p>
      )}
    </section>
  );
}
