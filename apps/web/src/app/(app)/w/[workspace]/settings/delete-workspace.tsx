"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { useTRPC } from "@/lib/trpc";

/** What deleting does, said once for the card and the dialog (apps/web/README.md, "Deleting a workspace"). */
const CONSEQUENCES = [
  ["Data", "every group with its primitives, files, snapshots and stored objects is deleted from its cell"],
  ["Keys", "every API key stops working at once (401)"],
  ["Apps", "every connected app (OAuth) is disconnected and its tokens stop working"],
  ["Members", "every member loses access and pending invitations are withdrawn"],
  ["Billing", "a Pro subscription is canceled at once: no further charge, no refund of the current period"],
] as const;

/**
 * The Settings page's "Danger zone" (owners only; the procedure checks again): deleting the
 * workspace after its name is typed in the confirm dialog, then back to the workspaces with a toast.
 */
export function DeleteWorkspace({ workspace, name }: { workspace: string; name: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const remove = useMutation(trpc.workspace.delete.mutationOptions());
  const list = (
    <ul className="space-y-1 text-sm">
      {CONSEQUENCES.map(([what, happens]) => (
        <li key={what}>
          <span className="font-medium">{what}:</span> {happens}.
        </li>
      ))}
    </ul>
  );
  return (
    <Card className="border-destructive/50">
      <CardHeader>
        <CardTitle>Delete this workspace</CardTitle>
        <CardDescription>
          Deletes <strong>{name}</strong> for everyone. It cannot be undone; the deletion stays in the operator's audit
          trail for 30 days.
        </CardDescription>
      </CardHeader>
      <CardContent>{list}</CardContent>
      <CardFooter>
        <ConfirmDialog
          trigger={<Button variant="destructive">Delete workspace</Button>}
          title={`Delete ${name}?`}
          description={
            <div className="space-y-3">
              <p>This cannot be undone.</p>
              {list}
            </div>
          }
          confirmLabel="Delete workspace"
          typedName={name}
          destructive
          onConfirm={async () => {
            await remove.mutateAsync({ workspace, name });
            await queryClient.invalidateQueries(trpc.workspace.list.queryFilter());
            toast.success(`Workspace ${name} deleted`);
            router.push("/");
          }}
        />
      </CardFooter>
    </Card>
  );
}
