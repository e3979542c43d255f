import type { ListResourcesResult, Resource } from "@modelcontextprotocol/sdk/types.js";
import {
  type FsRead,
  type ObjectPage,
  type Page,
  type PrimitiveInfo,
  type Principal,
  READ_TOOL,
  ServiceError,
  toolAllowed,
} from "@prim/wire";
import { addressableKey, fileUri, objectUri, schemaUri } from "./resource-uri.js";
import type { ToolInvoke } from "./resources.js";
import type { McpServerOptions } from "./server.js";

/** Resources per `resources/list` page (at most; a page may hold fewer). */
export const RESOURCE_PAGE = 100;

/** Primitives one page visits at most (a group of many empty ones still answers promptly). */
const PRIMITIVES_PER_PAGE = 50;

/** Listed in this order: every fs primitive's files, every storage primitive's objects, each db's schema. */
const TYPES = ["fs", "storage", "db"] as const;
type ListedType = (typeof TYPES)[number];

/**
 * Where a listing stands (the opaque cursor, base64url JSON): the type (`t`), the
 * `primitive.list` cursor that yields the primitive being listed (`pc`; one primitive per
 * `primitive.list` page), and the position inside it (`c`: storage.list's own cursor, or the
 * last fs path listed).
 */
interface ListState {
  t: number;
  pc?: string;
  c?: string;
}

function encodeCursor(state: ListState): string {
  return Buffer.from(JSON.stringify(state), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): ListState {
  const bad = () => new ServiceError("invalid_request", "cursor: not a cursor resources/list gave");
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  const s = state as Partial<ListState> | null;
  if (typeof s !== "object" || s === null || !Number.isInteger(s.t) || (s.t as number) < 0) throw bad();
  if ((s.pc !== undefined && typeof s.pc !== "string") || (s.c !== undefined && typeof s.c !== "string")) throw bad();
  return { t: s.t as number, ...(s.pc === undefined ? {} : { pc: s.pc }), ...(s.c === undefined ? {} : { c: s.c }) };
}

/**
 * Whether this caller's resources of `type` are listed: its read tool (fs_read, storage_read,
 * db_query), and for objects also storage_list (the listing operation's tool). The engine
 * still decides every call.
 */
function listable(principal: Principal, type: ListedType): boolean {
  if (!toolAllowed(principal, READ_TOOL[type])) return false;
  return type !== "storage" || toolAllowed(principal, "storage_list");
}

interface Listed {
  items: Resource[];
  /** Where the next page goes on inside this primitive; undefined: it is done. */
  next?: string;
}

async function listIn(
  call: ToolInvoke,
  options: McpServerOptions,
  p: PrimitiveInfo,
  after: string | undefined,
  room: number,
): Promise<Listed> {
  const target = { group: options.group.id, ref: p.id, type: p.type };
  if (p.type === "fs") {
    // fs.read lists a subtree whole (at most 10,000 entries): this pages through it by path.
    const read = await call<FsRead>(READ_TOOL.fs, "fs.read", target, { path: "/", list: true, recursive: true });
    if (read.kind !== "list") return { items: [] };
    const files = read.data.filter((e) => e.type === "file").sort((a, b) => (a.path < b.path ? -1 : 1));
    const rest = after === undefined ? files : files.filter((f) => f.path > after);
    const page = rest.slice(0, room);
    const items = page.map((f) => ({
      uri: fileUri(p.id, f.path),
      name: f.path,
      title: `${p.name}: ${f.path}`,
      size: f.size,
    }));
    return rest.length > room ? { items, next: page.at(-1)?.path } : { items };
  }
  if (p.type === "storage") {
    const page = await call<ObjectPage>("storage_list", "storage.list", target, {
      limit: Math.min(room, 1000),
      ...(after === undefined ? {} : { cursor: after }),
    });
    const items = page.data
      .filter((o) => addressableKey(o.key))
      .map((o) => ({
        uri: objectUri(p.id, o.key),
        name: o.key,
        title: `${p.name}: ${o.key}`,
        mimeType: o.content_type,
        size: o.size,
      }));
    return page.next_cursor === null ? { items } : { items, next: page.next_cursor };
  }
  const schema = {
    uri: schemaUri(p.id),
    name: `${p.name}/schema`,
    title: `Schema of db '${p.name}'`,
    mimeType: "application/json",
  };
  return { items: [schema] };
}

/** One page of `resources/list`: the group's files, objects and db schemas this caller may read. */
export async function listPage(
  call: ToolInvoke,
  options: McpServerOptions,
  cursor: string | undefined,
): Promise<ListResourcesResult> {
  let state: ListState = cursor === undefined ? { t: 0 } : decodeCursor(cursor);
  const resources: Resource[] = [];
  let visited = 0;
  while (state.t < TYPES.length && resources.length < RESOURCE_PAGE && visited < PRIMITIVES_PER_PAGE) {
    const type = TYPES[state.t] as ListedType;
    if (!listable(options.principal, type)) {
      state = { t: state.t + 1 };
      continue;
    }
    const input = { group: options.group.id, type, limit: 1, ...(state.pc === undefined ? {} : { cursor: state.pc }) };
    const page = await call<Page<PrimitiveInfo>>(null, "primitive.list", null, input);
    const p = page.data[0];
    if (p === undefined) {
      state = { t: state.t + 1 };
      continue;
    }
    visited++;
    // A paused primitive's data is refused (423): it lists nothing until resumed.
    const listed = p.paused ? { items: [] } : await listIn(call, options, p, state.c, RESOURCE_PAGE - resources.length);
    resources.push(...listed.items);
    if (listed.next !== undefined) state = { ...state, c: listed.next };
    else state = page.next_cursor === null ? { t: state.t + 1 } : { t: state.t, pc: page.next_cursor };
  }
  return { resources, ...(state.t < TYPES.length ? { nextCursor: encodeCursor(state) } : {}) };
}
