import { createHmac, timingSafeEqual } from "node:crypto";
import { ServiceError } from "@prim/wire";

/**
 * Change cursors: opaque to callers, checked by the engine. A primitive cursor is
 * `base64url("<epoch>.<seq>").<mac>`, the mac an HMAC-SHA256 (first 12 bytes) of
 * `<primitive id>.<epoch>` under the log's own secret: a garbled cursor, or one of another
 * primitive (even a fork, which draws a new secret) or of another epoch, fails the check (400) and
 * says nothing about what it names. The seq is not under the mac: a reader may start anywhere in
 * a log it may read (a seq past the newest is 400, before the oldest 409), and one mac per epoch
 * is computed once per read instead of once per entry (an HMAC per entry was a quarter of a
 * feed read's time: bench/changes.ts). A group cursor is `g1.` + base64url(JSON `[groupId, [[primitiveId, cursor]…]]`):
 * each part is a primitive cursor, checked by its primitive.
 */
export interface CursorPosition {
  epoch: number;
  seq: number;
}

const MAC_BYTES = 12;

/** The macs computed lately, by secret, primitive and epoch (a read reuses one for every entry). */
const macs = new Map<string, string>();

function mac(secret: Buffer, primitiveId: string, epoch: number): string {
  const key = `${secret.toString("latin1")}\u0000${primitiveId}\u0000${epoch}`;
  let tag = macs.get(key);
  if (tag === undefined) {
    tag = createHmac("sha256", secret)
      .update(`${primitiveId}.${epoch}`)
      .digest()
      .subarray(0, MAC_BYTES)
      .toString("base64url");
    if (macs.size >= 4096) macs.clear();
    macs.set(key, tag);
  }
  return tag;
}

export function encodeCursor(secret: Buffer, primitiveId: string, pos: CursorPosition): string {
  return `${Buffer.from(`${pos.epoch}.${pos.seq}`).toString("base64url")}.${mac(secret, primitiveId, pos.epoch)}`;
}

export function badCursor(field = "after"): ServiceError {
  return new ServiceError("invalid_request", `${field}: not a change cursor of this primitive`);
}

/** The position a cursor names, or 400 when it is not one this primitive issued. */
export function decodeCursor(secret: Buffer, primitiveId: string, cursor: string, field = "after"): CursorPosition {
  const [body, tag, ...rest] = cursor.split(".");
  if (body === undefined || tag === undefined || rest.length > 0) throw badCursor(field);
  const match = /^([1-9][0-9]{0,9})\.(0|[1-9][0-9]{0,15})$/.exec(Buffer.from(body, "base64url").toString());
  if (match === null) throw badCursor(field);
  const pos = { epoch: Number(match[1]), seq: Number(match[2]) };
  const given = Buffer.from(tag, "base64url");
  const want = Buffer.from(mac(secret, primitiveId, pos.epoch), "base64url");
  if (given.length !== want.length || !timingSafeEqual(given, want)) throw badCursor(field);
  // The canonical spelling only (base64url has several for the same bytes).
  if (encodeCursor(secret, primitiveId, pos) !== cursor) throw badCursor(field);
  return pos;
}

/** A group cursor: the group's id and each primitive's cursor (as that primitive issued it). */
export interface GroupCursor {
  group: string;
  parts: Map<string, string>;
}

export function encodeGroupCursor(cursor: GroupCursor): string {
  const parts = [...cursor.parts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `g1.${Buffer.from(JSON.stringify([cursor.group, parts])).toString("base64url")}`;
}

export function decodeGroupCursor(text: string, groupId: string, field = "after"): GroupCursor {
  const bad = new ServiceError("invalid_request", `${field}: not a change cursor of this group`);
  if (!text.startsWith("g1.")) throw bad;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text.slice(3), "base64url").toString());
  } catch {
    throw bad;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== groupId || !Array.isArray(parsed[1])) throw bad;
  const parts = new Map<string, string>();
  for (const part of parsed[1] as unknown[]) {
    if (!Array.isArray(part) || part.length !== 2 || typeof part[0] !== "string" || typeof part[1] !== "string") {
      throw bad;
    }
    parts.set(part[0], part[1]);
  }
  return { group: groupId, parts };
}
