"use client";
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import Link from "next/link";
import type { ReactNode } from "react";
import { Badge } from "@/components/ui/badge";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Progress } from "@/components/ui/progress";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { formatBytes, formatNumber } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { CapBehaviour } from "./cap-behaviour";
import type { DayPoint } from "./usage-charts";

// The charting library loads after the page, on its own (first-load JS stays small).
const chartSkeleton = () => <Skeleton className="h-[220px] w-full" />;
const OperationsChart = dynamic(() => import("./usage-charts").then((m) => m.OperationsChart), {
  ssr: false,
  loading: chartSkeleton,
});
const StorageChart = dynamic(() => import("./usage-charts").then((m) => m.StorageChart), {
  ssr: false,
  loading: chartSkeleton,
});

/** Every day of `month` (`YYYY-MM`) up to today (UTC), with the figures rolled up for it. */
export function monthDays(
  month: string,
  rows: { day: string; operations: number; storage_bytes: number }[],
  now = new Date(),
): DayPoint[] {
  const [year, m] = month.split("-").map(Number) as [number, number];
  const inMonth = new Date(Date.UTC(year, m, 0)).getUTCDate();
  const current = now.toISOString().slice(0, 7) === month;
  const last = current ? now.getUTCDate() : inMonth;
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return Array.from({ length: last }, (_, i) => {
    const day = `${month}-${String(i + 1).padStart(2, "0")}`;
    const row = byDay.get(day);
    return { day, operations: row?.operations ?? 0, storage: row?.storage_bytes ?? null };
  });
}

const monthName = (month: string) =>
  new Date(`${month}-01T00:00:00Z`).toLocaleDateString("en", { month: "long", year: "numeric", timeZone: "UTC" });

/** A figure against its limit: the number, "of <limit>" and a bar (no bar without a limit). */
function Figure(props: {
  id: string;
  title: string;
  value: string;
  limit?: { of: string; used: number; cap: number; what: string };
  note: ReactNode;
}) {
  const percent = props.limit === undefined ? 0 : Math.min(100, (100 * props.limit.used) / props.limit.cap);
  return (
    <Card role="group" aria-labelledby={`${props.id}-title`} data-figure={props.id}>
      <CardHeader className="pb-2 sm:pb-2">
        <CardDescription id={`${props.id}-title`}>{props.title}</CardDescription>
        <CardTitle className="text-2xl tabular-nums">
          <span data-figure-value>{props.value}</span>
          {props.limit !== undefined && (
            <span className="text-base font-normal text-muted-foreground"> of {props.limit.of}</span>
          )}
        </CardTitle>
      </CardHeader>
      <CardContent className="space-y-2">
        {props.limit !== undefined && (
          <Progress value={percent} aria-label={`${props.title}: ${percent.toFixed(1)}% of ${props.limit.what}`} />
        )}
        <p className="text-xs text-muted-foreground">{props.note}</p>
      </CardContent>
    </Card>
  );
}

/**
 * This month's usage (the same figures `prim admin usage` prints): operations, storage and
 * primitives against the plan, operations per day, storage over the month, the busiest
 * primitives, and what happens at a cap.
 */
export function UsagePanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const usage = useQuery(trpc.usage.summary.queryOptions({ workspace }));
  if (usage.isPending) {
    return (
      <div className="grid gap-4 md:grid-cols-3" aria-busy="true">
        <Skeleton className="h-36" />
        <Skeleton className="h-36" />
        <Skeleton className="h-36" />
        <Skeleton className="h-64 md:col-span-3" />
      </div>
    );
  }
  if (usage.isError) {
    return (
      <p role="alert" className="text-sm text-destructive">
        Could not load usage: {usage.error.message}
      </p>
    );
  }
  const u = usage.data;
  const caps = u.caps;
  const limitOps = caps?.operations ?? u.included?.operations;
  const limitBytes = caps?.storageBytes ?? u.included?.storageBytes;
  const days = monthDays(u.month, u.days);
  const capWord = caps !== null ? "the cap" : "the included amount";
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center gap-2 text-sm text-muted-foreground">
        <span>{monthName(u.month)} (UTC)</span>
        <Badge variant="secondary">
          {u.workspace.plan.slice(0, 1).toUpperCase()}
          {u.workspace.plan.slice(1)} plan
        </Badge>
        {!u.live && <Badge variant="warning">Live count unavailable: last minute's roll-up</Badge>}
      </div>
      <div className="grid gap-4 md:grid-cols-3">
        <Figure
          id="operations"
          title="Operations this month"
          value={formatNumber(u.operations)}
          limit={
            limitOps === undefined
              ? undefined
              : { of: formatNumber(limitOps), used: u.operations, cap: limitOps, what: capWord }
          }
          note={
            caps !== null
              ? "Resets on the 1st (UTC). Live: counted as calls are admitted."
              : u.included !== null
                ? "Included in Pro; more is billed as overage."
                : "No cap on this plan. Live: counted as calls are admitted."
          }
        />
        <Figure
          id="storage"
          title="Storage (this month's peak)"
          value={formatBytes(u.storage_bytes)}
          limit={
            limitBytes === undefined
              ? undefined
              : { of: formatBytes(limitBytes), used: u.storage_bytes, cap: limitBytes, what: capWord }
          }
          note={<span data-exact>{formatNumber(u.storage_bytes)} bytes</span>}
        />
        <Figure
          id="primitives"
          title="Primitives"
          value={formatNumber(u.primitives)}
          limit={
            caps === null
              ? undefined
              : { of: formatNumber(caps.primitives), used: u.primitives, cap: caps.primitives, what: "the cap" }
          }
          note={caps === null ? "Unlimited on this plan." : "Deleting a primitive frees its place."}
        />
      </div>

      <div className="grid gap-4 xl:grid-cols-2">
        <Card role="group" aria-labelledby="ops-chart-title">
          <CardHeader>
            <CardTitle id="ops-chart-title">Operations per day</CardTitle>
            <CardDescription>Each day's calls, updated every minute.</CardDescription>
          </CardHeader>
          {/* A chart keeps its last width until it is measured again: never wider than its card. */}
          <CardContent className="overflow-hidden">
            <OperationsChart days={days} />
          </CardContent>
        </Card>
        <Card role="group" aria-labelledby="storage-chart-title">
          <CardHeader>
            <CardTitle id="storage-chart-title">Storage over the month</CardTitle>
            <CardDescription>Each day's peak, measured every few seconds while in use.</CardDescription>
          </CardHeader>
          {/* A chart keeps its last width until it is measured again: never wider than its card. */}
          <CardContent className="overflow-hidden">
            <StorageChart days={days} />
          </CardContent>
        </Card>
      </div>

      <div className="grid gap-4 xl:grid-cols-2">
        <TopPrimitives workspace={workspace} rows={u.top_primitives} />
        <CapBehaviour workspace={workspace} plan={u.workspace.plan} caps={caps} included={u.included} />
      </div>

      <details className="rounded-lg border p-4 text-sm">
        <summary className="cursor-pointer font-medium">Figures by day</summary>
        <Table aria-label="Figures by day" className="mt-2">
          <TableHeader>
            <TableRow>
              <TableHead className="whitespace-normal">Day (UTC)</TableHead>
              <TableHead className="whitespace-normal text-right">Operations</TableHead>
              <TableHead className="whitespace-normal text-right">Storage peak (bytes)</TableHead>
            </TableRow>
          </TableHeader>
          <TableBody>
            {days.map((d) => (
              <TableRow key={d.day}>
                <TableCell className="font-mono">{d.day}</TableCell>
                <TableCell className="text-right tabular-nums">{formatNumber(d.operations)}</TableCell>
                <TableCell className="text-right tabular-nums">
                  {d.storage === null ? "—" : formatNumber(d.storage)}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </details>
    </div>
  );
}

/** The month's busiest primitives, each linking to its page (a deleted one says so). */
function TopPrimitives({ workspace, rows }: { workspace: string; rows: UsageTop[] }) {
  const peak = Math.max(1, ...rows.map((r) => r.operations));
  return (
    <Card role="group" aria-labelledby="top-title">
      <CardHeader>
        <CardTitle id="top-title">Top primitives by operations</CardTitle>
        <CardDescription>This month, updated every minute.</CardDescription>
      </CardHeader>
      <CardContent>
        {rows.length === 0 ? (
          <EmptyState
            title="No calls on a primitive yet this month"
            description="Figures appear a minute after the first calls."
          />
        ) : (
          <Table aria-label="Top primitives by operations">
            <TableHeader>
              <TableRow>
                <TableHead>Primitive</TableHead>
                <TableHead className="text-right">Operations</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {rows.map((r) => (
                <TableRow key={r.id} data-primitive={r.id}>
                  <TableCell className="max-w-0 w-full">
                    <div className="flex min-w-0 items-center gap-2">
                      {r.name === null || r.group === null ? (
                        <span className="truncate text-muted-foreground">
                          Deleted primitive <span className="font-mono text-xs">{r.id}</span>
                        </span>
                      ) : (
                        <Link
                          href={`/w/${workspace}/data/${encodeURIComponent(r.group)}/${r.id}`}
                          className="truncate font-medium underline-offset-4 hover:underline"
                        >
                          {r.group}/{r.name}
                        </Link>
                      )}
                      {r.type !== null && <Badge variant="outline">{r.type}</Badge>}
                    </div>
                    <div className="mt-1 h-1.5 rounded-full bg-muted" aria-hidden="true">
                      <div
                        className="h-full rounded-full bg-primary"
                        style={{ width: `${(100 * r.operations) / peak}%` }}
                      />
                    </div>
                  </TableCell>
                  <TableCell className="text-right align-top tabular-nums">{formatNumber(r.operations)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
      </CardContent>
    </Card>
  );
}

type UsageTop = { id: string; name: string | null; type: string | null; group: string | null; operations: number };
