"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";

const bytes = (n: number) =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(2)} GiB`
    : n >= 1024 ** 2
      ? `${(n / 1024 ** 2).toFixed(1)} MiB`
      : `${Math.ceil(n / 1024)} KiB`;

/** This month's operations, storage and primitives against the plan, with a bar per day. */
export function UsagePanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const usage = useQuery(trpc.usage.summary.queryOptions({ workspace }));
  if (usage.isPending) return <p className="text-sm text-zinc-600">Loading usage…</p>;
  if (usage.isError)
    return (
      <p role="alert" className="text-sm text-red-700">
        Could not load usage: {usage.error.message}
      </p>
    );
  const u = usage.data;
  const peak = Math.max(1, ...u.days.map((d) => d.operations));
  const of = (value: number, cap: number | undefined) =>
    cap === undefined ? value.toLocaleString("en") : `${value.toLocaleString("en")} of ${cap.toLocaleString("en")}`;
  return (
    <section aria-labelledby="usage-title" className="rounded-lg border bg-white p-4">
      <h2 id="usage-title" className="text-lg font-semibold">
        {u.workspace.name}: {u.workspace.plan} plan, {u.month.slice(0, 4)}-{u.month.slice(4)}
      </h2>
      <dl className="mt-2 grid grid-cols-1 gap-2 text-sm sm:grid-cols-3">
        <div>
          <dt className="text-zinc-600">Operations this month</dt>
          <dd className="font-medium">{of(u.operations, u.caps?.operations)}</dd>
        </div>
        <div>
          <dt className="text-zinc-600">Storage</dt>
          <dd className="font-medium">
            {bytes(u.storage_bytes)}
            {u.caps === null ? "" : ` of ${bytes(u.caps.storageBytes)}`}
          </dd>
        </div>
        <div>
          <dt className="text-zinc-600">Primitives</dt>
          <dd className="font-medium">{of(u.primitives, u.caps?.primitives)}</dd>
        </div>
      </dl>
      <p className="mt-2 text-xs text-zinc-600">
        {u.caps === null
          ? "This plan is never cut off."
          : "At a cap, calls answer 429 plan_limit until the 1st (UTC) or until you upgrade; reads and deletes keep working at the storage cap."}
        {u.live ? "" : " (live counts unavailable: figures are the last minute's roll-up)"}
      </p>
      <h3 className="mt-4 text-sm font-medium">Operations by day</h3>
      {u.days.length === 0 ? (
        <p className="text-sm text-zinc-600">No operations yet this month.</p>
      ) : (
        <ol className="mt-2 flex h-32 items-end gap-1" aria-label="operations by day">
          {u.days.map((d) => (
            <li
              key={d.day}
              className="flex-1 bg-zinc-700"
              style={{ height: `${Math.max(2, (100 * d.operations) / peak)}%` }}
              title={`${d.day}: ${d.operations.toLocaleString("en")} operations`}
            >
              <span className="sr-only">
                {d.day}: {d.operations} operations
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
