"use client";

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

/** "More" for a paged list while there is a next page. */
export function MoreButton({ query }: { query: { hasNextPage: boolean; fetchNextPage: () => unknown } }) {
  if (!query.hasNextPage) return null;
  return (
    <button
      type="button"
      className="mt-2 h-8 rounded-md border border-input bg-background px-3 text-sm hover:bg-accent"
      onClick={() => void query.fetchNextPage()}
    >
      More
    </button>
  );
}
