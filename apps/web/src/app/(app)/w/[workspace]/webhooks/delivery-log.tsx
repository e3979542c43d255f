"use client";
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { formatDate, formatRelative } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

const STATUS_BADGE = { delivered: "success", pending: "warning", failed: "destructive" } as const;

/** A time as "3 min ago", the full date on hover. */
function When({ at }: { at: number }) {
  return (
    <time dateTime={new Date(at).toISOString()} title={formatDate(at, { time: true })}>
      {formatRelative(at)}
    </time>
  );
}

/**
 * One endpoint's delivery log, newest first, 20 at a time ("Older deliveries"), looked at again
 * every few seconds while open: status, attempts, the last HTTP status or error, its times, and
 * "Redeliver" (a new delivery of the same message at the end of the log).
 */
export function DeliveryLog({ workspace, endpoint }: { workspace: string; endpoint: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { workspace, id: endpoint };
  const log = useInfiniteQuery(
    trpc.webhooks.deliveries.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.next_cursor ?? undefined,
      refetchInterval: 5_000,
      retry: false,
    }),
  );
  const redeliver = useMutation(
    trpc.webhooks.redeliver.mutationOptions({
      onSuccess: () => {
        toast.success("Redelivery queued");
        void queryClient.invalidateQueries({ queryKey: trpc.webhooks.deliveries.infiniteQueryKey(input) });
      },
    }),
  );
  const items = log.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section aria-label="Deliveries" className="grid gap-3 rounded-md border bg-muted/30 p-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-semibold">Deliveries</h3>
        <Button variant="outline" size="sm" onClick={() => void log.refetch()} disabled={log.isFetching}>
          Refresh
        </Button>
      </div>
      {log.isPending && <p className="text-sm text-muted-foreground">Loading deliveries…</p>}
      <ErrorText error={log.error} />
      {!log.isPending && items.length === 0 && log.error === null && (
        <p className="text-sm text-muted-foreground">No deliveries yet: the next change is sent within a second.</p>
      )}
      {items.length > 0 && (
        <ol className="divide-y" aria-label="Delivery log">
          {items.map((d) => (
            <li
              key={d.id}
              data-testid="delivery"
              className="flex flex-wrap items-start justify-between gap-x-4 gap-y-2 py-2"
            >
              <div className="grid min-w-0 flex-1 gap-1 text-sm">
                <p className="flex min-w-0 flex-wrap items-center gap-2">
                  <Badge variant={STATUS_BADGE[d.status]}>{d.status}</Badge>
                  <code className="min-w-0 break-all font-mono text-xs">{d.message_id.split("#")[0]}</code>
                  {d.message_id.includes("#") && <Badge variant="outline">redelivery</Badge>}
                </p>
                <p className="text-muted-foreground break-words">
                  {d.attempts} {d.attempts === 1 ? "attempt" : "attempts"}
                  {d.last_status !== null && <> · HTTP {d.last_status}</>}
                  {d.last_error !== null && <> · {d.last_error}</>}
                </p>
                <p className="text-muted-foreground break-words">
                  Created <When at={d.created_at} />
                  {d.last_attempt_at !== null && (
                    <>
                      {" "}
                      · last attempt <When at={d.last_attempt_at} />
                    </>
                  )}
                  {d.delivered_at !== null && (
                    <>
                      {" "}
                      · delivered <When at={d.delivered_at} />
                    </>
                  )}
                  {d.next_attempt_at !== null && (
                    <>
                      {" "}
                      · next attempt <When at={d.next_attempt_at} />
                    </>
                  )}
                </p>
              </div>
              {d.status !== "pending" && (
                <Button
                  variant="outline"
                  size="sm"
                  disabled={redeliver.isPending}
                  aria-label={`Redeliver ${d.message_id.split("#")[0]}`}
                  onClick={() => redeliver.mutate({ ...input, delivery: d.id })}
                >
                  Redeliver
                </Button>
              )}
            </li>
          ))}
        </ol>
      )}
      <ErrorText error={redeliver.error} />
      {log.hasNextPage && (
        <Button variant="outline" size="sm" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? "Loading…" : "Older deliveries"}
        </Button>
      )}
    </section>
  );
}
