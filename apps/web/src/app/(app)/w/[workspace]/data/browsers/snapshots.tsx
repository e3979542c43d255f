"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { formatDate } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** The "Snapshots" tab: take one, list them, restore one (after a confirmation). */
export function SnapshotsTab({ workspace, primitive }: { workspace: string; primitive: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const target = { workspace, primitive };
  const snapshots = useQuery(trpc.primitive.snapshots.queryOptions(target));
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.primitive.get.queryKey(target) });
    void queryClient.invalidateQueries({ queryKey: trpc.primitive.snapshots.queryKey(target) });
    void queryClient.invalidateQueries({ queryKey: trpc.primitive.browse.pathKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.data.kvList.pathKey() });
  };
  const snapshot = useMutation(
    trpc.primitive.snapshot.mutationOptions({
      onSuccess: (s) => {
        toast.success(`Snapshot ${s.name ?? s.id} taken`);
        refresh();
      },
      onError: (error) => toast.error(`Snapshot failed: ${error.message}`),
    }),
  );
  const restore = useMutation(trpc.primitive.restore.mutationOptions());
  const items = snapshots.data?.data ?? [];
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-2">
        <Button
          onClick={() => {
            snapshot.reset();
            snapshot.mutate(target);
          }}
          disabled={snapshot.isPending}
        >
          Take snapshot
        </Button>
      </div>
      <ErrorText error={snapshot.error} />
      {snapshots.isPending && <Skeleton className="h-24" />}
      <ErrorText error={snapshots.error} />
      {snapshots.isSuccess && items.length === 0 && (
        <EmptyState
          title="No snapshots"
          description="A snapshot keeps this primitive's data as it is now, to restore later."
        />
      )}
      {items.length > 0 && (
        <Card>
          <Table>
            <TableHeader>
              <TableRow>
                <TableHead>Snapshot</TableHead>
                <TableHead>Taken</TableHead>
                <TableHead className="w-24">
                  <span className="sr-only">Actions</span>
                </TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {items.map((s) => (
                <TableRow key={s.id}>
                  <TableCell className="max-w-0 min-w-32 truncate">{s.name ?? s.id}</TableCell>
                  <TableCell className="text-muted-foreground">{formatDate(s.created_at)}</TableCell>
                  <TableCell>
                    <ConfirmDialog
                      trigger={
                        <Button variant="outline" size="sm" aria-label={`Restore ${s.name ?? s.id}`}>
                          Restore
                        </Button>
                      }
                      title={`Restore ${s.name ?? s.id}?`}
                      description={`The primitive's current data is replaced by the snapshot of ${formatDate(s.created_at)}. Changes since then are lost unless you take a snapshot first.`}
                      confirmLabel="Restore"
                      onConfirm={async () => {
                        await restore.mutateAsync({ ...target, snapshot: s.id });
                        toast.success(`Restored ${s.name ?? s.id}`);
                        refresh();
                      }}
                    />
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Card>
      )}
    </div>
  );
}
