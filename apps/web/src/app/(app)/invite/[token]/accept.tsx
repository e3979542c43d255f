"use client";
import { useMutation } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

export function AcceptInvitation({ token }: { token: string }) {
  const trpc = useTRPC();
  const accept = useMutation(
    trpc.invitation.accept.mutationOptions({ onSuccess: (joined) => window.location.assign(`/w/${joined.workspace}`) }),
  );
  return (
    <div className="mt-4">
      <button
        type="button"
        disabled={accept.isPending}
        onClick={() => accept.mutate({ token })}
        className="rounded bg-zinc-900 px-4 py-2 text-white"
      >
        Accept invitation
      </button>
      <ErrorText error={accept.error} className="mt-2" />
    </div>
  );
}
