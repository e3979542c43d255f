"use client";
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SubmitButton } from "@/components/ui/submit-button";
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
    <Card>
      <CardHeader>
        <CardTitle>New workspace</CardTitle>
      </CardHeader>
      <CardContent>
        <form onSubmit={submit} className="flex flex-wrap items-end gap-2">
          <div className="grid min-w-0 flex-1 gap-1.5">
            <Label htmlFor="workspace-name">Workspace name</Label>
            <Input
              id="workspace-name"
              name="name"
              value={name}
              onChange={(e) => {
                setName(e.target.value);
                if (create.isError) create.reset();
              }}
              aria-invalid={create.isError}
              aria-describedby={create.isError ? "workspace-error" : undefined}
            />
          </div>
          <SubmitButton disabled={create.isPending}>Create workspace</SubmitButton>
          {create.isError && (
            <p id="workspace-error" role="alert" className="w-full text-sm text-destructive">
              {create.error.message}
            </p>
          )}
        </form>
      </CardContent>
    </Card>
  );
}
