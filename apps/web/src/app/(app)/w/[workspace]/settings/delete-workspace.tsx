"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardFooter, CardHeader } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** What deleting does (apps/web/README.md, "Deleting a workspace"): the card's list and the dialog's text. */
const CONSEQUENCES = [
  ["Data", "every group, with its primitives, files, snapshots and stored objects, is deleted"],
  ["Keys", "every API key stops working at once"],
  ["Apps", "every connected app is disconnected and its tokens stop working"],
  ["Members", "every member loses access; pending invitations are withdrawn"],
  ["Billing", "a Pro subscription is canceled at once: nothing more is charged, the current period is not refunded"],
] as const;

/** The list as lines of phrasing content (the dialog's description is a paragraph). */
const SAID = (
  <>
    <span className="mb-2 block">This cannot be undone.</span>
    {CONSEQUENCES.map(([what, happens]) => (
      <span key={what} className="mt-1 block">
        <span className="font-medium text-foreground">{what}:</span> {happens}.
      </span>
    ))}
  </>
);

/**
 * The Settings page's "Danger zone" (owners only; the procedure checks again): deletes the
 * workspace once its name is typed in the confirm dialog, then goes to the workspaces with a toast.
 */
export function DeleteWorkspace({ workspace, name }: { workspace: string; name: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const remove = useMutation(trpc.workspace.delete.mutationOptions());
  return (
    <Card className="border-destructive/50">
      <CardHeader>
        <h3 className="font-semibold leading-none">Delete this workspace</h3>
        <CardDescription>
          Deletes <span className="font-medium text-foreground">{name}</span> for everyone, for good. The deletion stays
          in the operator's audit trail for 30 days.
        </CardDescription>
      </CardHeader>
      <CardContent>
        <ul className="grid gap-1.5 text-sm">
          {CONSEQUENCES.map(([what, happens]) => (
            <li key={what}>
              <span className="font-medium">{what}:</span> {happens}.
            </li>
          ))}
        </ul>
      </CardContent>
      <CardFooter>
        <ConfirmDialog
          trigger={<Button variant="destructive">Delete workspace</Button>}
          title={`Delete ${name}?`}
          description={SAID}
          confirmLabel="Delete workspace"
          typedName={name}
          destructive
          onConfirm={async () => {
            await remove.mutateAsync({ workspace, name });
            await queryClient.invalidateQueries(trpc.workspace.list.queryFilter());
            toast.success(`Workspace ${name} deleted`);
            router.push("/");
            router.refresh();
          }}
        />
      </CardFooter>
    </Card>
  );
}
