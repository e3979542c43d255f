import { type ChangeEntry, type PrimitiveType, ServiceError } from "@prim/wire";
import { type CursorPosition, decodeCursor, encodeCursor } from "./cursor.js";
import type { ChangeLogView, ChangeRow } from "./log.js";

/** The field a type names its subject with (`key`, `path`, …); a queue purge names its queue. */
function subjectField(type: PrimitiveType, op: string): "key" | "path" | "id" | "name" | "queue" | "table" {
  switch (type) {
    case "kv":
    case "storage":
      return "key";
    case "fs":
      return "path";
    case "vault":
      return "name";
    case "db":
      return "table";
    default:
      return op === "purge" ? "queue" : "id";
  }
}

/** One primitive as a change-feed reader sees it. */
export interface LogSource {
  id: string;
  type: PrimitiveType;
  log: ChangeLogView;
}

export interface LogRead {
  entries: ChangeEntry[];
  /** The position after the last entry read (or the one started from). */
  cursor: string;
}

/** The cursor before every entry `source` still holds (what a 409 names). */
export function oldestCursor(source: LogSource): string {
  const { epoch, secret } = source.log.state();
  return encodeCursor(secret, source.id, { epoch, seq: source.log.bounds().oldestCursor });
}

/**
 * Where a read of `source` starts: after `cursor` (checked: 400 when it is not one of this
 * primitive's; 409 naming the oldest cursor held when it is from before a restore or past the
 * retention window), or before every held entry.
 */
export function startOf(source: LogSource, cursor: string | undefined, field = "after"): CursorPosition {
  const { epoch, secret } = source.log.state();
  const { oldestCursor: oldest, newest } = source.log.bounds();
  if (cursor === undefined) return { epoch, seq: oldest };
  const pos = decodeCursor(secret, source.id, cursor, field);
  const held = () => encodeCursor(secret, source.id, { epoch, seq: oldest });
  if (pos.epoch !== epoch) {
    throw new ServiceError(
      "conflict",
      `${field}: this cursor is from before the primitive was restored from a snapshot; the oldest cursor still held is '${held()}'`,
    );
  }
  if (pos.seq < oldest) {
    throw new ServiceError(
      "conflict",
      `${field}: this cursor is older than the change log's retention window; the oldest cursor still held is '${held()}'`,
    );
  }
  if (pos.seq > newest) throw new ServiceError("invalid_request", `${field}: not a change cursor of this primitive`);
  return pos;
}

/** The cursor naming `pos` itself. */
export function startCursor(source: LogSource, pos: CursorPosition): string {
  return encodeCursor(source.log.state().secret, source.id, pos);
}

/** At most `limit` entries of `source` after `from`, oldest first. */
export function readFrom(source: LogSource, from: CursorPosition, limit: number): LogRead {
  const { secret } = source.log.state();
  const rows = source.log.after(from.seq, limit);
  const entries = rows.map((row) =>
    toEntry(source, row, from.epoch, encodeCursor(secret, source.id, { ...from, seq: row.seq })),
  );
  const last = rows.at(-1);
  const cursor = encodeCursor(secret, source.id, { epoch: from.epoch, seq: last?.seq ?? from.seq });
  return { entries, cursor };
}

function toEntry(source: LogSource, row: ChangeRow, epoch: number, cursor: string): ChangeEntry {
  const entry: ChangeEntry = {
    primitive: source.id,
    type: source.type,
    epoch,
    seq: row.seq,
    ts: row.ts,
    op: row.op,
    cursor,
  };
  entry[subjectField(source.type, row.op)] = row.subject;
  if (row.version !== null) entry.version = row.version;
  if (row.size !== null) entry.size = row.size;
  if (row.extra !== null) entry.detail = JSON.parse(row.extra) as Record<string, unknown>;
  return entry;
}
