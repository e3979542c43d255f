"use client";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { TextField } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

/** Renames the workspace (owners and admins). */
export function RenameWorkspace({ workspace, name }: { workspace: string; name: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [value, setValue] = useState(name);
  const rename = useMutation(trpc.workspace.rename.mutationOptions({ onSuccess: () => router.refresh() }));
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    rename.mutate({ workspace, name: value });
  }
  return (
    <form onSubmit={submit} className="mt-2 flex flex-wrap items-end gap-2">
      <TextField label="Workspace name" value={value} onChange={setValue} />
      <button type="submit" className="rounded border px-3 py-1 text-sm">
        Rename
      </button>
      <ErrorText error={rename.error} className="w-full" />
    </form>
  );
}
