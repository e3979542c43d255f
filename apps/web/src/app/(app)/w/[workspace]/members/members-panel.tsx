"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { NativeSelect } from "@/components/ui/native-select";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";
import { Invitations } from "./invitations";

const ROLES = ["owner", "admin", "member", "billing"] as const;

/**
 * Members and roles; admins change roles (an owner's only an owner) and remove, anyone leaves
 * (removal and leaving end that user's connected apps here; both confirmed first).
 */
export function MembersPanel({ workspace, canManage, me }: { workspace: string; canManage: boolean; me: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.members.list.queryOptions({ workspace }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey({ workspace }) });
  const remove = useMutation(trpc.members.remove.mutationOptions());
  const setRole = useMutation(
    trpc.members.setRole.mutationOptions({
      onSuccess: (_, input) => {
        toast.success(`Role changed to ${input.role}`);
        void refresh();
      },
      onError: (error) => toast.error(`Role not changed: ${error.message}`),
    }),
  );
  const leave = useMutation(trpc.members.leave.mutationOptions());
  return (
    <div className="space-y-6">
      {list.isPending && <Skeleton className="h-32" />}
      <ErrorText error={list.error} prefix="Could not load members: " />
      {list.data !== undefined && (
        <Card>
          <Table>
            <TableHeader>
              <TableRow>
                <TableHead>Member</TableHead>
                <TableHead>Role</TableHead>
                <TableHead className="w-28">
                  <span className="sr-only">Actions</span>
                </TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {list.data.map((m) => (
                <TableRow key={m.id}>
                  <TableCell className="max-w-0 min-w-40">
                    <span className="block truncate">{m.email}</span>
                    {m.id === me && <span className="text-xs text-muted-foreground">you</span>}
                  </TableCell>
                  <TableCell>
                    {canManage && m.id !== me ? (
                      <NativeSelect
                        aria-label={`Role of ${m.email}`}
                        value={m.role}
                        className="h-8 w-32"
                        disabled={setRole.isPending}
                        onChange={(e) =>
                          setRole.mutate({ workspace, user: m.id, role: e.target.value as (typeof ROLES)[number] })
                        }
                      >
                        {ROLES.map((role) => (
                          <option key={role} value={role}>
                            {role}
                          </option>
                        ))}
                      </NativeSelect>
                    ) : (
                      <Badge variant="secondary">{m.role}</Badge>
                    )}
                  </TableCell>
                  <TableCell className="text-right">
                    {m.id === me ? (
                      <ConfirmDialog
                        trigger={
                          <Button variant="outline" size="sm">
                            Leave
                          </Button>
                        }
                        title="Leave this workspace?"
                        description="You lose access to its data, keys and billing at once, and the apps you connected here are disconnected. An admin can invite you again."
                        confirmLabel="Leave workspace"
                        onConfirm={async () => {
                          await leave.mutateAsync({ workspace });
                          window.location.assign("/");
                        }}
                      />
                    ) : (
                      canManage && (
                        <ConfirmDialog
                          trigger={
                            <Button variant="outline" size="sm" aria-label={`Remove ${m.email}`}>
                              Remove
                            </Button>
                          }
                          title={`Remove ${m.email}?`}
                          description="They lose access at once, and the apps they connected here are disconnected."
                          confirmLabel="Remove"
                          onConfirm={async () => {
                            await remove.mutateAsync({ workspace, user: m.id });
                            toast.success(`${m.email} removed`);
                            await refresh();
                          }}
                        />
                      )
                    )}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Card>
      )}
      {canManage && <Invitations workspace={workspace} />}
    </div>
  );
}
