"use client";
import { useMutation } from "@tanstack/react-query";
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
      {accept.isError && (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {accept.error.message}
        </p>
      )}
    </div>
  );
}
