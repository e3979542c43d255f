"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { CopyButton } from "@/components/ui/copy-button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { NativeSelect } from "@/components/ui/native-select";
import { SubmitButton } from "@/components/ui/submit-button";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** Invitations (admins): a link for an email and a role (mailed and shown here), pending ones withdrawn. */
export function Invitations({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [made, setMade] = useState<{ link: string; email: string; mailed: boolean } | null>(null);
  const pending = useQuery(trpc.members.invitations.queryOptions({ workspace }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.members.invitations.queryKey({ workspace }) });
  const invite = useMutation(
    trpc.members.invite.mutationOptions({
      onSuccess: (invitation) => {
        setMade({ link: invitation.link, email: invitation.email, mailed: invitation.mailed });
        if (invitation.mailed) toast.success(`Invitation sent to ${invitation.email}`);
        else toast.error(`The mail to ${invitation.email} could not be sent: share the link`);
        void refresh();
      },
    }),
  );
  const withdraw = useMutation(trpc.members.revokeInvitation.mutationOptions());
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    invite.reset();
    invite.mutate({
      workspace,
      email: String(form.get("email") ?? ""),
      role: String(form.get("role")) as "member",
    });
  }
  return (
    <Card>
      <CardHeader>
        <CardTitle>Invite</CardTitle>
        <CardDescription>The invitation is mailed; the link works once, for that address, for 7 days.</CardDescription>
      </CardHeader>
      <CardContent className="space-y-4">
        <form onSubmit={submit} className="grid gap-3 sm:grid-cols-[1fr_10rem_auto] sm:items-end">
          <div className="grid gap-1.5">
            <Label htmlFor="invite-email">Email</Label>
            <Input id="invite-email" name="email" type="email" required />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="invite-role">Role</Label>
            <NativeSelect id="invite-role" name="role" defaultValue="member">
              <option>member</option>
              <option>admin</option>
              <option>billing</option>
              <option>owner</option>
            </NativeSelect>
          </div>
          <SubmitButton disabled={invite.isPending}>Send invitation</SubmitButton>
        </form>
        <ErrorText error={invite.error} />
        {made !== null && (
          <div role="status" className="space-y-2 rounded-md border bg-muted/50 p-3 text-sm">
            <p>
              {made.mailed
                ? `We emailed the invitation to ${made.email}. You can also send them this link:`
                : `The mail to ${made.email} could not be sent. Send them this link:`}
            </p>
            <div className="flex flex-wrap items-center gap-2">
              <code data-testid="invite-link" className="min-w-0 flex-1 font-mono text-xs break-all">
                {made.link}
              </code>
              <CopyButton value={made.link} label="Copy link" />
            </div>
          </div>
        )}
        {pending.data !== undefined && pending.data.length > 0 && (
          <div>
            <h3 className="text-sm font-medium">Pending</h3>
            <ul className="mt-1 divide-y text-sm">
              {pending.data.map((i) => (
                <li key={i.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
                  <span className="min-w-0 break-all">
                    {i.email} <Badge variant="outline">{i.role}</Badge>
                  </span>
                  <ConfirmDialog
                    trigger={
                      <Button variant="outline" size="sm" aria-label={`Withdraw invitation for ${i.email}`}>
                        Withdraw
                      </Button>
                    }
                    title={`Withdraw the invitation for ${i.email}?`}
                    description="Its link stops working at once. You can invite them again later."
                    confirmLabel="Withdraw"
                    onConfirm={async () => {
                      await withdraw.mutateAsync({ workspace, id: i.id });
                      toast.success(`Invitation for ${i.email} withdrawn`);
                      await refresh();
                    }}
                  />
                </li>
              ))}
            </ul>
          </div>
        )}
      </CardContent>
    </Card>
  );
}
