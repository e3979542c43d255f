"use client";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import type { ActorName, AuditEntry } from "@/lib/audit";
import { formatDate, formatRelative } from "@/lib/format";

type Entry = AuditEntry;

/** What a gone actor is now, by kind. */
const GONE: Record<ActorName["kind"], string> = {
  user: "removed",
  key: "revoked",
  oauth: "disconnected",
  system: "",
  unknown: "",
};

/**
 * One audit entry: when, what (the action on its primitive or group, linked), by whom (by
 * name; a removed member, revoked key or disconnected app marked) and, for a failed call, its
 * error code (the engine keeps it in the entry's `detail.error`).
 */
export function AuditRow(props: {
  workspace: string;
  entry: Entry;
  actor: ActorName | undefined;
  /** The control-plane entry's target by name (a key, a member, an app), when it names one. */
  target: ActorName | undefined;
  onActor: () => void;
}) {
  const { entry: e, workspace } = props;
  const actor = props.actor ?? { kind: "unknown", label: e.actor, detail: null, gone: false };
  const error = typeof e.detail?.error === "string" ? e.detail.error : null;
  const deleted = actor.label.startsWith("Deleted ");
  return (
    <li
      className="grid gap-x-4 gap-y-1 px-4 py-3 text-sm md:grid-cols-[10rem_minmax(0,1fr)_minmax(0,16rem)]"
      data-entry={e.id}
      data-failed={error ?? undefined}
    >
      <time dateTime={new Date(e.ts).toISOString()} title={formatDate(e.ts)} className="text-muted-foreground">
        {formatRelative(e.ts)}
      </time>
      <div className="min-w-0 space-y-1">
        <div className="flex flex-wrap items-center gap-2">
          <code className="font-mono text-xs font-medium">{e.action}</code>
          {error !== null && (
            <Badge variant="destructive" title="This call failed">
              Failed: {error}
            </Badge>
          )}
        </div>
        <p className="break-words text-muted-foreground">
          <Subject workspace={workspace} entry={e} target={props.target} />
          {e.target !== null && e.primitive !== "workspace" && (
            <>
              {" · "}
              <span className="font-mono text-xs">{e.target}</span>
            </>
          )}
        </p>
      </div>
      <div className="min-w-0">
        <span className="text-muted-foreground md:hidden">by </span>
        <button
          type="button"
          onClick={props.onActor}
          title={`${e.actor} — show only this actor's entries`}
          className="max-w-full truncate text-left font-medium underline-offset-4 hover:underline"
        >
          {actor.label}
        </button>
        <div className="flex flex-wrap items-center gap-1.5 text-xs text-muted-foreground">
          {actor.detail !== null && <span className="truncate font-mono">{actor.detail}</span>}
          {actor.gone && !deleted && GONE[actor.kind] !== "" && <Badge variant="outline">{GONE[actor.kind]}</Badge>}
          {actor.kind === "oauth" && <span>app</span>}
        </div>
      </div>
    </li>
  );
}

/**
 * A control-plane entry's change in a few words (`from → to`, an invitation's address and role,
 * a key or app connected read-only).
 */
function change(detail: Record<string, unknown> | null): string | null {
  if (detail === null) return null;
  if (typeof detail.from === "string" && typeof detail.to === "string") return `${detail.from} → ${detail.to}`;
  if (typeof detail.email === "string")
    return typeof detail.role === "string" ? `${detail.email} as ${detail.role}` : detail.email;
  if (detail.read_only === true) return "read-only";
  return null;
}

/** The entry's primitive (linked while it may exist), its group, or the control plane's target by name. */
function Subject({ workspace, entry: e, target }: { workspace: string; entry: Entry; target: ActorName | undefined }) {
  if (e.primitive === "workspace") {
    const what = change(e.detail);
    const named =
      target !== undefined
        ? `${target.label}${target.detail === null ? "" : ` (${target.detail})`}`
        : e.target === workspace
          ? "this workspace"
          : (e.target ?? "this workspace");
    return (
      <span>
        {named}
        {what !== null && ` · ${what}`}
      </span>
    );
  }
  if (e.primitive === "group") return <span>group {e.group}</span>;
  const name = `${e.group}/${e.instance ?? e.primitive_id ?? "?"}`;
  return (
    <>
      <span className="mr-1">{e.primitive}</span>
      {e.primitive_id === null ? (
        <span>{name}</span>
      ) : (
        <Link
          href={`/w/${workspace}/data/${encodeURIComponent(e.group)}/${e.primitive_id}`}
          className="text-foreground underline decoration-muted-foreground/50 underline-offset-4 hover:decoration-foreground"
        >
          {name}
        </Link>
      )}
    </>
  );
}
