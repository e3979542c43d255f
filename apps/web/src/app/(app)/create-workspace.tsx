"use client";
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "@/lib/trpc";

/** A new workspace, owned by the signed-in user; the server's validation shown by the field. */
export function CreateWorkspace() {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const create = useMutation(
    trpc.workspace.create.mutationOptions({ onSuccess: (ws) => window.location.assign(`/w/${ws.id}`) }),
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({ name });
  }
  return (
    <form onSubmit={submit} className="mt-6 flex flex-wrap items-end gap-2">
      <label className="text-sm">
        New workspace
        <input
          name="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          className="mt-1 block rounded border p-2"
          aria-invalid={create.isError}
          aria-describedby={create.isError ? "workspace-error" : undefined}
        />
      </label>
      <button type="submit" disabled={create.isPending} className="rounded bg-zinc-900 px-4 py-2 text-white">
        Create workspace
      </button>
      {create.isError && (
        <p id="workspace-error" role="alert" className="w-full text-sm text-red-700">
          {create.error.message}
        </p>
      )}
    </form>
  );
}
