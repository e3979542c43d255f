"use client";
// The usage page's two charts (recharts), loaded on their own (next/dynamic, no SSR) so the
// route's first load carries none of the charting library. Colors are the theme's CSS
// variables, so both read in the light and the dark theme.
import { Area, AreaChart, Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatBytes, formatNumber } from "@/lib/format";

/** One day of the month: operations (0 when none was rolled up), storage (null when unknown). */
export interface DayPoint {
  day: string;
  operations: number;
  storage: number | null;
}

const AXIS = { fill: "var(--muted-foreground)", fontSize: 12 };
const TOOLTIP = {
  contentStyle: {
    background: "var(--popover)",
    border: "1px solid var(--border)",
    borderRadius: "var(--radius)",
    color: "var(--popover-foreground)",
    fontSize: 12,
  },
  labelStyle: { color: "var(--popover-foreground)" },
  itemStyle: { color: "var(--popover-foreground)" },
  cursor: { fill: "var(--muted)", stroke: "var(--border)" },
};

/** "2026-11-05" → "5". */
const dayOfMonth = (day: string) => String(Number(day.slice(8, 10)));

const compact = (n: number) => new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 }).format(n);

/** Operations per day of the month, a bar each. */
export function OperationsChart({ days }: { days: DayPoint[] }) {
  return (
    <ResponsiveContainer width="100%" height={220}>
      <BarChart data={days} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
        <CartesianGrid vertical={false} stroke="var(--border)" />
        <XAxis
          dataKey="day"
          tickFormatter={dayOfMonth}
          tick={AXIS}
          tickLine={false}
          axisLine={{ stroke: "var(--border)" }}
          interval="preserveStartEnd"
          minTickGap={8}
        />
        <YAxis tickFormatter={compact} tick={AXIS} tickLine={false} axisLine={false} width={44} allowDecimals={false} />
        <Tooltip
          {...TOOLTIP}
          formatter={(value) => [formatNumber(Number(value)), "Operations"]}
          labelFormatter={(day) => String(day)}
        />
        <Bar
          dataKey="operations"
          name="Operations"
          fill="var(--primary)"
          radius={[3, 3, 0, 0]}
          maxBarSize={28}
          isAnimationActive={false}
        />
      </BarChart>
    </ResponsiveContainer>
  );
}

/** Storage over the month (each day's high-water mark), days without a figure bridged. */
export function StorageChart({ days }: { days: DayPoint[] }) {
  // A day or two of figures draw no area: their points are shown instead.
  const sparse = days.filter((d) => d.storage !== null).length < 3;
  return (
    <ResponsiveContainer width="100%" height={220}>
      <AreaChart data={days} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
        <CartesianGrid vertical={false} stroke="var(--border)" />
        <XAxis
          dataKey="day"
          tickFormatter={dayOfMonth}
          tick={AXIS}
          tickLine={false}
          axisLine={{ stroke: "var(--border)" }}
          interval="preserveStartEnd"
          minTickGap={8}
        />
        <YAxis tickFormatter={(n: number) => formatBytes(n)} tick={AXIS} tickLine={false} axisLine={false} width={76} />
        <Tooltip
          {...TOOLTIP}
          formatter={(value) => [formatBytes(Number(value)), "Storage"]}
          labelFormatter={(day) => String(day)}
        />
        <Area
          type="monotone"
          dataKey="storage"
          name="Storage"
          connectNulls
          stroke="var(--primary)"
          strokeWidth={2}
          fill="var(--primary)"
          fillOpacity={0.12}
          dot={sparse ? { r: 4, fill: "var(--primary)", strokeWidth: 0 } : false}
          isAnimationActive={false}
        />
      </AreaChart>
    </ResponsiveContainer>
  );
}
