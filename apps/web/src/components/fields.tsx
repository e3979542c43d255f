"use client";
import { Button } from "@/components/ui/button";

/** A labelled text input bound to state. */
export function TextField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  mono?: boolean;
  className?: string;
}) {
  return (
    <label className={`block text-sm ${props.className ?? ""}`}>
      {props.label}
      <input
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        className={`mt-1 block h-9 w-full rounded-md border border-input bg-background px-3 text-foreground ${props.mono === true ? "font-mono" : ""}`}
      />
    </label>
  );
}

/** "Load more" for a paged list while there is a next page (disabled while it loads). */
export function MoreButton({
  query,
  className,
}: {
  query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
  className?: string;
}) {
  if (!query.hasNextPage) return null;
  return (
    <Button
      variant="outline"
      size="sm"
      className={className}
      onClick={() => void query.fetchNextPage()}
      disabled={query.isFetchingNextPage}
    >
      {query.isFetchingNextPage ? "Loading…" : "Load more"}
    </Button>
  );
}
