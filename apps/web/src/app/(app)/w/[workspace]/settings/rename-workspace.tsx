"use client";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SubmitButton } from "@/components/ui/submit-button";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** Renames the workspace (owners and admins); the sidebar and titles follow. */
export function RenameWorkspace({ workspace, name }: { workspace: string; name: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [value, setValue] = useState(name);
  const rename = useMutation(
    trpc.workspace.rename.mutationOptions({
      onSuccess: () => {
        toast.success(`Renamed to ${value.trim()}`);
        router.refresh();
      },
    }),
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    rename.reset();
    rename.mutate({ workspace, name: value });
  }
  return (
    <Card>
      <CardHeader>
        <CardTitle>Name</CardTitle>
        <CardDescription>Shown to every member and in invitations.</CardDescription>
      </CardHeader>
      <CardContent>
        <form onSubmit={submit} className="flex max-w-xl flex-wrap items-end gap-2">
          <div className="grid min-w-0 flex-1 gap-1.5">
            <Label htmlFor="workspace-name">Workspace name</Label>
            <Input id="workspace-name" value={value} onChange={(e) => setValue(e.target.value)} />
          </div>
          <SubmitButton variant="outline" disabled={rename.isPending || value.trim() === name}>
            Rename
          </SubmitButton>
        </form>
        <ErrorText error={rename.error} className="mt-2" />
      </CardContent>
    </Card>
  );
}
