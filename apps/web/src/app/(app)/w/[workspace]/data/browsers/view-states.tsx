"use client";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { errorText } from "@/lib/errors";

/**
 * A list's loading (skeleton rows), error (the spec code and message, with a retry) and empty
 * states; nothing once there are rows to show.
 */
export function ListState(props: {
  query: { isPending: boolean; error: unknown; refetch?: () => unknown };
  count: number | undefined;
  empty: { title: string; description?: string };
  label: string;
}) {
  const { query } = props;
  if (query.isPending) {
    return (
      <div role="status" aria-label={`Loading ${props.label}`} className="grid gap-2">
        <Skeleton className="h-8" />
        <Skeleton className="h-8" />
        <Skeleton className="h-8 w-2/3" />
      </div>
    );
  }
  if (query.error != null) {
    return (
      <div role="alert" className="flex flex-wrap items-center gap-2 text-sm text-destructive">
        <span className="min-w-0 break-words">
          Could not load {props.label}: {errorText(query.error)}
        </span>
        {query.refetch !== undefined && (
          <Button size="sm" variant="outline" onClick={() => void query.refetch?.()}>
            Try again
          </Button>
        )}
      </div>
    );
  }
  if (props.count === 0) return <EmptyState title={props.empty.title} description={props.empty.description} />;
  return null;
}

/**
 * Cursor paging: `cursor` is the page shown (undefined: the first); `next(c)` goes on, `back()`
 * returns to the previous page.
 */
export function useCursorPages() {
  const [stack, setStack] = useState<string[]>([]);
  return {
    cursor: stack.at(-1),
    page: stack.length + 1,
    next: (cursor: string) => setStack((s) => [...s, cursor]),
    back: () => setStack((s) => s.slice(0, -1)),
    reset: () => setStack([]),
  };
}

/** Previous / next page buttons for a cursor-paged list (nothing when there is one page). */
export function Pager(props: {
  pages: ReturnType<typeof useCursorPages>;
  nextCursor: string | null | undefined;
  label: string;
}) {
  const { pages, nextCursor } = props;
  if (pages.page === 1 && (nextCursor == null || nextCursor === "")) return null;
  return (
    <nav aria-label={`${props.label} pages`} className="flex items-center justify-end gap-2 text-sm">
      <Button size="sm" variant="outline" disabled={pages.page === 1} onClick={pages.back}>
        Previous
      </Button>
      <span className="text-muted-foreground">Page {pages.page}</span>
      <Button
        size="sm"
        variant="outline"
        disabled={nextCursor == null}
        onClick={() => nextCursor != null && pages.next(nextCursor)}
      >
        Next
      </Button>
    </nav>
  );
}
