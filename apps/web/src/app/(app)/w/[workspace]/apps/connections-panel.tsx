"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { formatDate } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/**
 * Connected apps (OAuth): client (read-only ones badged), group, tools, since when; disconnect
 * (confirmed) ends their tokens.
 */
export function ConnectionsPanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.connections.list.queryOptions({ workspace }));
  const disconnect = useMutation(trpc.connections.disconnect.mutationOptions());
  if (list.isPending) return <Skeleton className="h-32" />;
  if (list.isError) return <ErrorText error={list.error} prefix="Could not load connected apps: " />;
  if (list.data.length === 0) {
    return (
      <EmptyState
        title="No app is connected."
        description="An MCP client that signs in through OAuth and is allowed on the consent screen appears here."
      />
    );
  }
  return (
    <Card>
      <Table>
        <TableHeader>
          <TableRow>
            <TableHead>App</TableHead>
            <TableHead>Group</TableHead>
            <TableHead className="hidden md:table-cell">Tools</TableHead>
            <TableHead className="hidden sm:table-cell">Since</TableHead>
            <TableHead className="w-28">
              <span className="sr-only">Actions</span>
            </TableHead>
          </TableRow>
        </TableHeader>
        <TableBody>
          {list.data.map((c) => {
            const name = c.client_name ?? c.client_id;
            return (
              <TableRow key={c.id}>
                <TableCell className="font-medium">
                  <span className="flex flex-wrap items-center gap-2">
                    {name}
                    {c.read_only && <Badge variant="outline">read-only</Badge>}
                  </span>
                </TableCell>
                <TableCell>
                  <Badge variant="secondary">{c.group}</Badge>
                </TableCell>
                <TableCell className="hidden max-w-80 truncate text-muted-foreground md:table-cell">
                  {c.tools.join(", ")}
                </TableCell>
                <TableCell className="hidden text-muted-foreground sm:table-cell">{formatDate(c.created_at)}</TableCell>
                <TableCell className="text-right">
                  <ConfirmDialog
                    trigger={
                      <Button variant="outline" size="sm" aria-label={`Disconnect ${name}`}>
                        Disconnect
                      </Button>
                    }
                    title={`Disconnect ${name}?`}
                    description="Its access and refresh tokens stop working at once; the app must ask for consent again."
                    confirmLabel="Disconnect"
                    onConfirm={async () => {
                      await disconnect.mutateAsync({ workspace, id: c.id });
                      toast.success(`${name} disconnected`);
                      await queryClient.invalidateQueries({ queryKey: trpc.connections.list.queryKey({ workspace }) });
                    }}
                  />
                </TableCell>
              </TableRow>
            );
          })}
        </TableBody>
      </Table>
    </Card>
  );
}
