"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/lib/trpc";
import { type Props, State, useView } from "./shared";

/** Queues with their counts by status; a queue's dead jobs, requeued one by one. */
export function QueueBrowser(props: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [queue, setQueue] = useState<string | null>(null);
  const queues = useView<{ name: string; ready: number; leased: number; done: number; dead: number }>(
    props,
    "queue.queues",
  );
  const dead = useView<{ id: string; attempts: number; last_error?: string | null }>(
    props,
    "queue.messages",
    { queue, status: "dead" },
    queue !== null,
  );
  const requeue = useMutation(
    trpc.primitive.requeue.mutationOptions({
      onSuccess: () => void queryClient.invalidateQueries({ queryKey: trpc.primitive.browse.pathKey() }),
    }),
  );
  return (
    <div className="mt-4 text-sm">
      <h3 className="font-medium">Queues</h3>
      <State query={queues} empty="No queues yet." />
      <ul>
        {queues.data?.data.map((q) => (
          <li key={q.name}>
            <button type="button" className="underline" onClick={() => setQueue(q.name)}>
              {q.name}
            </button>{" "}
            <span className="text-zinc-600">
              ready {q.ready} · leased {q.leased} · done {q.done} · dead {q.dead}
            </span>
          </li>
        ))}
      </ul>
      {queue !== null && (
        <>
          <h3 className="mt-3 font-medium">Dead jobs in {queue}</h3>
          <State query={dead} empty="No dead jobs." />
          <ul>
            {dead.data?.data.map((j) => (
              <li key={j.id} className="flex items-center justify-between py-1">
                <span className="font-mono">
                  {j.id} {j.last_error ?? ""}
                </span>
                <button
                  type="button"
                  className="rounded border px-2 py-0.5"
                  onClick={() => requeue.mutate({ ...props, queue, job: j.id })}
                >
                  Requeue
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
