"use client";
import { useQuery } from "@tanstack/react-query";
import { QueryState } from "@/components/status";
import { useTRPC } from "@/lib/trpc";
import type { BrowseView } from "@/server/trpc/routers/primitive";

// What every type's browser shares: its props and the read-only views of `primitive.browse`.

export type Props = { workspace: string; primitive: string };

/** A view's answer (`{ data: [...] }` pages), loading and error states included. */
export function useView<T>(props: Props, view: BrowseView, args: Record<string, unknown> = {}, enabled = true) {
  const trpc = useTRPC();
  return useQuery({
    ...trpc.primitive.browse.queryOptions({ ...props, view, args }),
    enabled,
    select: (answer: unknown) => answer as { data: T[] },
  });
}

export function State(props: {
  query: { isPending: boolean; error: { message: string } | null; data?: { data: unknown[] } };
  empty: string;
}) {
  const { query } = props;
  return (
    <QueryState
      query={{ isPending: query.isPending, error: query.error, data: query.data?.data }}
      empty={props.empty}
    />
  );
}
