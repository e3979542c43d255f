"use client";
import { useQueryClient } from "@tanstack/react-query";
import { RotateCcwIcon, Trash2Icon } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { formatDate, formatNumber, formatRelative } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { cn } from "@/lib/utils";
import { type Target, useAct, useBrowse, useBrowsePages, useUrlState } from "./edit-kit";
import { pretty } from "./json-text";
import { SendJobDialog } from "./queue-send";

const STATUSES = ["ready", "leased", "done", "dead"] as const;
type Status = (typeof STATUSES)[number];
type Counts = { name: string } & Record<Status, number>;
type Job = {
  id: string;
  body: unknown;
  status: Status;
  priority: number;
  attempts: number;
  max_attempts: number;
  available_at: number;
  last_error: string | null;
  dedupe_key: string | null;
  created_at: number;
};

/**
 * A queue primitive: its queues with counts by status; a queue's jobs by status (in the
 * address, `?queue=&status=`), paged; send a job, requeue dead jobs (one or all), purge done or
 * dead jobs (the queue's name typed).
 */
export function QueueBrowser(props: Target) {
  const [queue, setQueue] = useUrlState("queue", "");
  const act = useAct(props);
  const queues = useBrowse<{ data: Counts[] }>(props, "queue.queues", {});
  const list = queues.data?.data ?? [];
  const selected = list.find((q) => q.name === queue) ?? null;
  return (
    <section aria-label="Queues" className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 className="font-semibold">Queues</h2>
        <SendJobDialog act={act} queue={queue} onSent={setQueue} />
      </div>
      {queues.isPending && <Skeleton className="h-20" />}
      <ErrorText error={queues.error} />
      {queues.isSuccess && list.length === 0 && (
        <EmptyState title="No queues yet" description="A queue is made by its first job: send one." />
      )}
      {list.length > 0 && (
        <ul className="divide-y rounded-lg border" aria-label="Queues and their jobs by status">
          {list.map((q) => (
            <li
              key={q.name}
              className={cn("flex flex-wrap items-center gap-x-4 gap-y-1 px-3 py-2", q.name === queue && "bg-muted")}
            >
              <Button
                variant="link"
                className="h-auto min-w-0 flex-1 basis-32 justify-start p-0 font-mono break-all whitespace-normal text-foreground"
                aria-pressed={q.name === queue}
                onClick={() => setQueue(q.name)}
              >
                {q.name}
              </Button>
              <span className="flex flex-wrap gap-2 text-xs">
                {STATUSES.map((s) => (
                  <Badge key={s} variant={s === "dead" && q.dead > 0 ? "destructive" : "outline"}>
                    {s} {formatNumber(q[s])}
                  </Badge>
                ))}
              </span>
            </li>
          ))}
        </ul>
      )}
      {selected !== null && <Jobs key={selected.name} target={props} act={act} counts={selected} />}
    </section>
  );
}

function Jobs(props: { target: Target; act: ReturnType<typeof useAct>; counts: Counts }) {
  const { target, act, counts } = props;
  const queue = counts.name;
  const [status, setStatus] = useUrlState("status", "ready");
  const current = (STATUSES as readonly string[]).includes(status) ? (status as Status) : "ready";
  const jobs = useBrowsePages<{ data: Job[] }>(target, "queue.messages", { queue, status: current });
  const items = jobs.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section aria-labelledby="jobs-title" className="space-y-3 rounded-lg border p-3 sm:p-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 id="jobs-title" className="font-medium break-all">
          Jobs in <span className="font-mono">{queue}</span>
        </h3>
        <div className="flex flex-wrap gap-2">
          {current === "dead" && counts.dead > 0 && (
            <RequeueAll target={target} act={act} queue={queue} count={counts.dead} />
          )}
          {(current === "done" || current === "dead") && counts[current] > 0 && (
            <ConfirmDialog
              trigger={
                <Button variant="outline" size="sm">
                  <Trash2Icon aria-hidden /> Purge {current}
                </Button>
              }
              title={`Purge the ${current} jobs of ${queue}?`}
              description={`All ${formatNumber(counts[current])} ${current} jobs of this queue are deleted. Pending jobs stay.`}
              confirmLabel="Purge"
              typedName={queue}
              onConfirm={async () => {
                const { purged } = await act.run<{ purged: number }>("queue.purge", { queue, status: current });
                toast.success(`Purged ${countJobs(purged, current)}`);
              }}
            />
          )}
        </div>
      </div>
      <fieldset className="m-0 flex min-w-0 flex-wrap gap-1 border-0 p-0">
        <legend className="sr-only">Status</legend>
        {STATUSES.map((s) => (
          <Button
            key={s}
            size="sm"
            variant={s === current ? "secondary" : "ghost"}
            aria-pressed={s === current}
            onClick={() => setStatus(s)}
          >
            {s} ({formatNumber(counts[s])})
          </Button>
        ))}
      </fieldset>
      {jobs.isPending && <Skeleton className="h-16" />}
      <ErrorText error={jobs.error} />
      {jobs.isSuccess && items.length === 0 && <p className="text-sm text-muted-foreground">No {current} jobs.</p>}
      {items.length > 0 && (
        <ul className="divide-y rounded-md border" aria-label={`${current} jobs`}>
          {items.map((job) => (
            <JobRow key={job.id} job={job} queue={queue} act={act} />
          ))}
        </ul>
      )}
      {jobs.hasNextPage && (
        <Button
          variant="outline"
          size="sm"
          onClick={() => void jobs.fetchNextPage()}
          disabled={jobs.isFetchingNextPage}
        >
          {jobs.isFetchingNextPage ? "Loading…" : "Load more"}
        </Button>
      )}
    </section>
  );
}

function JobRow(props: { job: Job; queue: string; act: ReturnType<typeof useAct> }) {
  const { job, act } = props;
  const later = job.status === "ready" && job.available_at > Date.now();
  return (
    <li className="grid gap-2 p-3 text-sm">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <span className="font-mono text-xs break-all">{job.id}</span>
        {job.status === "dead" && (
          <Button
            variant="outline"
            size="sm"
            aria-label={`Requeue ${job.id}`}
            disabled={act.pending}
            onClick={() =>
              void act.run("queue.requeue", { queue: props.queue, job: job.id }, `Requeued ${job.id}`).catch(() => {})
            }
          >
            <RotateCcwIcon aria-hidden /> Requeue
          </Button>
        )}
      </div>
      <p className="flex flex-wrap gap-x-3 gap-y-1 text-xs text-muted-foreground">
        <span>
          attempt {job.attempts} of {job.max_attempts}
        </span>
        {job.priority !== 0 && <span>priority {job.priority}</span>}
        <span title={formatDate(job.created_at)}>sent {formatRelative(job.created_at)}</span>
        {later && <span title={formatDate(job.available_at)}>ready {formatRelative(job.available_at)}</span>}
        {job.dedupe_key !== null && <span className="font-mono break-all">dedupe {job.dedupe_key}</span>}
      </p>
      {job.last_error !== null && <p className="text-xs break-all text-destructive">{job.last_error}</p>}
      <pre className="max-h-40 overflow-auto rounded-md bg-muted px-2 py-1 font-mono text-xs leading-5 break-all whitespace-pre-wrap">
        {pretty(job.body)}
      </pre>
    </li>
  );
}

/** Every dead job of the queue back to ready: their ids read page by page, then requeued one by one. */
function RequeueAll(props: { target: Target; act: ReturnType<typeof useAct>; queue: string; count: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [progress, setProgress] = useState<string | null>(null);
  async function requeueAll() {
    const ids: string[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = (await queryClient.fetchQuery({
          ...trpc.primitive.browse.queryOptions({
            ...props.target,
            view: "queue.messages",
            args: { queue: props.queue, status: "dead", limit: 100, ...(cursor === undefined ? {} : { cursor }) },
          }),
          staleTime: 0,
        })) as { data: Job[]; next_cursor: string | null };
        ids.push(...page.data.map((j) => j.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      let failed = 0;
      for (const [i, id] of ids.entries()) {
        setProgress(`${i + 1}/${ids.length}`);
        await props.act
          .run("queue.requeue", { queue: props.queue, job: id }, undefined, { refresh: false })
          .catch(() => failed++);
      }
      await props.act.refresh();
      const done = ids.length - failed;
      if (failed === 0) toast.success(`Requeued ${countJobs(done, "dead")}`);
      else toast.error(`Requeued ${countJobs(done, "dead")}; ${formatNumber(failed)} refused (see above)`);
    } finally {
      setProgress(null);
    }
  }
  return (
    <Button size="sm" onClick={() => void requeueAll()} disabled={progress !== null} aria-busy={progress !== null}>
      <RotateCcwIcon aria-hidden />{" "}
      {progress === null ? `Requeue all ${formatNumber(props.count)}` : `Requeuing ${progress}…`}
    </Button>
  );
}

/** "1 dead job", "12 done jobs". */
function countJobs(n: number, status: string): string {
  return `${formatNumber(n)} ${status} ${n === 1 ? "job" : "jobs"}`;
}
