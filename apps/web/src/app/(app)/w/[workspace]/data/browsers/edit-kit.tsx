"use client";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useId, useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { Label } from "@/components/ui/label";
import { Textarea } from "@/components/ui/textarea";
import { errorText } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { cn } from "@/lib/utils";
import type { Action, BrowseView } from "@/server/trpc/routers/primitive";
import { type Parsed, parseJson, pretty } from "./json-text";

// What the kv, fs, queue and storage browsers share to change data: one `primitive.act` call
// with its toasts and refreshes, the JSON editor, and a selection kept in the address.

/** The browsers' target: a workspace and a primitive's id. */
export type Target = { workspace: string; primitive: string };

/** A read-only view of `primitive.browse` (the answer cast to its shape), refetched on refresh. */
export function useBrowse<T>(target: Target, view: BrowseView, args: Record<string, unknown>, enabled = true) {
  const trpc = useTRPC();
  return useQuery({
    ...trpc.primitive.browse.queryOptions({ ...target, view, args }),
    enabled,
    select: (answer: unknown) => answer as T,
  });
}

/**
 * A paged view (`{ data, next_cursor }`: queue.messages, storage.list) page by page ("Load
 * more"); refreshed with every browse view.
 */
export function useBrowsePages<T>(target: Target, view: BrowseView, args: Record<string, unknown>, enabled = true) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { ...target, view, args };
  return useInfiniteQuery({
    queryKey: [...trpc.primitive.browse.queryKey(input), "pages"],
    initialPageParam: undefined as string | undefined,
    enabled,
    queryFn: async ({ pageParam }) =>
      (await queryClient.fetchQuery({
        ...trpc.primitive.browse.queryOptions({
          ...input,
          args: pageParam === undefined ? args : { ...args, cursor: pageParam },
        }),
        staleTime: 0,
      })) as T & { next_cursor: string | null },
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
}

/**
 * One operation of ACTIONS on the primitive: `run(op, args)` resolves with the answer, and
 * refreshes every browse/kv list afterwards; an error is toasted (code and message; not when
 * `quiet(err)` says the caller explains it) and thrown on (a ConfirmDialog shows it too);
 * `refresh: false` leaves the refresh to the caller (a loop of calls).
 * `pending` while a call runs.
 */
export function useAct(target: Target) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const act = useMutation(trpc.primitive.act.mutationOptions());
  const refresh = useCallback(async () => {
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.primitive.browse.pathKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.data.kvList.pathKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.primitive.preview.pathKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.primitive.get.pathKey() }),
    ]);
  }, [queryClient, trpc]);
  const run = useCallback(
    async <T = unknown>(
      op: Action,
      args: Record<string, unknown>,
      done?: string,
      options: { quiet?: (err: unknown) => boolean; refresh?: boolean } = {},
    ): Promise<T> => {
      try {
        const answer = (await act.mutateAsync({ ...target, op, args })) as T;
        if (done !== undefined) toast.success(done);
        return answer;
      } catch (err) {
        if (options.quiet?.(err) !== true) toast.error(errorText(err));
        throw err;
      } finally {
        if (options.refresh !== false) void refresh();
      }
    },
    [act, target, refresh],
  );
  return { run, pending: act.isPending, refresh };
}

/**
 * A selection kept in the address (`?name=value`, replaced, not pushed), so that a reload or a
 * shared link opens the same folder, queue or prefix.
 */
export function useUrlState(name: string, fallback: string): [string, (value: string) => void] {
  const [value, setValue] = useState(() => {
    if (typeof window === "undefined") return fallback;
    return new URL(window.location.href).searchParams.get(name) ?? fallback;
  });
  const set = useCallback(
    (next: string) => {
      setValue(next);
      const url = new URL(window.location.href);
      if (next === fallback) url.searchParams.delete(name);
      else url.searchParams.set(name, next);
      window.history.replaceState(window.history.state, "", url);
    },
    [name, fallback],
  );
  return [value, set];
}

/**
 * A JSON value typed in a textarea, checked as it is typed: the parse error with its line and
 * column (aria-invalid, described by it), a "Format" button, Ctrl/Cmd+Enter to submit the form.
 * `onChange` gets the text.
 */
export function JsonEditor(props: {
  label: string;
  value: string;
  onChange: (text: string) => void;
  rows?: number;
  autoFocus?: boolean;
}) {
  const id = useId();
  const parsed = parseJson(props.value);
  const empty = props.value.trim() === "";
  return (
    <div className="grid gap-2">
      <div className="flex items-end justify-between gap-2">
        <Label htmlFor={id}>{props.label}</Label>
        <Button
          variant="ghost"
          size="sm"
          disabled={!parsed.ok}
          onClick={() => parsed.ok && props.onChange(pretty(parsed.value))}
        >
          Format
        </Button>
      </div>
      <Textarea
        id={id}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        onKeyDown={(e) => {
          // Ctrl/Cmd+Enter saves (the form's own checks apply: invalid JSON is not sent).
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            e.currentTarget.form?.requestSubmit();
          }
        }}
        rows={props.rows ?? 8}
        spellCheck={false}
        autoFocus={props.autoFocus}
        aria-invalid={!parsed.ok && !empty}
        aria-describedby={`${id}-status`}
        className="max-h-[50vh] font-mono text-xs leading-5"
      />
      <p
        id={`${id}-status`}
        role={parsed.ok || empty ? undefined : "alert"}
        className={cn("text-xs", parsed.ok || empty ? "text-muted-foreground" : "text-destructive")}
      >
        {empty ? "Enter a JSON value" : jsonStatus(parsed)}
      </p>
    </div>
  );
}

function jsonStatus(parsed: Parsed): string {
  if (!parsed.ok) return `Invalid JSON at line ${parsed.line}, column ${parsed.column}: ${parsed.message}`;
  const v = parsed.value;
  const kind = v === null ? "null" : Array.isArray(v) ? `array of ${v.length}` : typeof v;
  return `Valid JSON (${kind})`;
}

/** A labelled field row of the browsers' dialogs. */
export function Field(props: { label: string; hint?: string; children: (id: string) => React.ReactNode }) {
  const id = useId();
  return (
    <div className="grid gap-2">
      <Label htmlFor={id}>{props.label}</Label>
      {props.children(id)}
      {props.hint !== undefined && <p className="text-xs text-muted-foreground">{props.hint}</p>}
    </div>
  );
}
