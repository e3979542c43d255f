import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type ResourceTemplate,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type ChangeNotice,
  type FsRead,
  narrowTools,
  noticeCovers,
  type ObjectRead,
  type PrimitiveType,
  READ_TOOL,
  type ResolvedPrimitive,
  ServiceError,
  type TableDetail,
  type TableSummary,
  type Target,
  toolAllowed,
  toServiceError,
} from "@prim/wire";
import { MAX_INLINE_BYTES, readCapped } from "./context.js";
import { listPage } from "./resource-list.js";
import { filePath, objectKey, parseResourceUri, type ResourceAddress, URI_PREFIX } from "./resource-uri.js";
import type { McpServerOptions } from "./server.js";

/** What a resource handler calls: `invoker.invoke` narrowed to one tool, audited like a tool call. */
export type ToolInvoke = <T>(tool: string | null, op: string, target: Target, input: unknown) => Promise<T>;

/** The MCP convention for "resource not found" (the spec's error code goes in `data`). */
export const RESOURCE_NOT_FOUND = -32002;

/** A service error as a JSON-RPC error: `data` carries the spec's `{ code, message }`. */
function rpcError(err: unknown): Error {
  const error = toServiceError(err);
  const code =
    error.code === "not_found"
      ? RESOURCE_NOT_FOUND
      : error.code === "invalid_request"
        ? ErrorCode.InvalidParams
        : error.code === "internal_error"
          ? ErrorCode.InternalError
          : ErrorCode.InvalidRequest;
  return Object.assign(new Error(`${error.code}: ${error.message}`), {
    code,
    data: { code: error.code, message: error.message },
  });
}

const TEXT_MIME =
  /^(text\/|application\/(json|jsonl|x-ndjson|xml|javascript|sql|toml|yaml|x-yaml|x-sh)\b|[^;]*\+(json|xml)\b)/;

/** Whether a mime type is text (its bytes are sent as `text` when they are valid UTF-8). */
export const isTextMime = (mime: string) => TEXT_MIME.test(mime.toLowerCase()) || /charset=utf-8/i.test(mime);

function contents(uri: string, mimeType: string, bytes: Buffer): ReadResourceResult {
  const text = bytes.toString("utf8");
  if (isTextMime(mimeType) && Buffer.from(text, "utf8").equals(bytes)) return { contents: [{ uri, mimeType, text }] };
  return { contents: [{ uri, mimeType, blob: bytes.toString("base64") }] };
}

/** Resolves the URI's primitive in the session's group (an id or name of another group: not_found). */
async function resolve(call: ToolInvoke, options: McpServerOptions, address: ResourceAddress) {
  return call<ResolvedPrimitive>(null, "primitive.resolve", options.group.id, { ref: address.ref });
}

const refTo = (options: McpServerOptions, p: ResolvedPrimitive) => ({
  group: options.group.id,
  ref: p.id,
  type: p.type,
});

async function readResource(call: ToolInvoke, options: McpServerOptions, uri: string): Promise<ReadResourceResult> {
  const address = parseResourceUri(uri);
  const p = await resolve(call, options, address);
  const target = refTo(options, p);
  if (p.type === "fs") {
    const path = filePath(address, uri);
    const read = await call<FsRead>(READ_TOOL.fs, "fs.read", target, { path });
    if (read.kind !== "file" || read.body === null) throw new ServiceError("not_found", `'${path}' is a directory`);
    const bytes = await readCapped(read.body, read.entry.size, `file '${path}'`, "Read it with fs_read over REST.");
    return contents(uri, read.content_type, bytes);
  }
  if (p.type === "storage") {
    const key = objectKey(address, uri);
    const read = await call<ObjectRead>(READ_TOOL.storage, "storage.read", target, { key });
    if (read.body === null) throw new ServiceError("not_found", `object '${key}'`);
    const bytes = await readCapped(
      read.body,
      read.info.size,
      `object '${key}'`,
      "Use storage_sign for a download URL.",
    );
    return contents(uri, read.info.content_type, bytes);
  }
  if (p.type === "db" && address.segments.join("/") === "schema") {
    const tables = await call<{ data: TableSummary[] }>(READ_TOOL.db, "db.tables", target, {});
    const details: TableDetail[] = [];
    for (const t of tables.data)
      details.push(await call<TableDetail>(READ_TOOL.db, "db.table", target, { table: t.name }));
    const bytes = Buffer.from(JSON.stringify({ tables: details }, null, 2), "utf8");
    if (bytes.length > MAX_INLINE_BYTES) {
      throw new ServiceError("payload_too_large", `the schema is ${bytes.length} bytes; at most ${MAX_INLINE_BYTES}`);
    }
    return contents(uri, "application/json", bytes);
  }
  throw new ServiceError("not_found", `resource '${uri}'`);
}

/** The templates of the types whose read tool this caller has. */
function templates(options: McpServerOptions): ResourceTemplate[] {
  const out: ResourceTemplate[] = [];
  const allowed = (type: PrimitiveType) => toolAllowed(options.principal, READ_TOOL[type]);
  if (allowed("fs") || allowed("storage")) {
    out.push({
      uriTemplate: `${URI_PREFIX}{primitive}/{+path}`,
      name: "file-or-object",
      title: "A file (fs) or object (storage)",
      description:
        "primitive: an fs or storage primitive's id, or its name in this group; path: the file's path without its leading '/', or the object's key (each segment percent-encoded).",
    });
  }
  if (allowed("db")) {
    out.push({
      uriTemplate: `${URI_PREFIX}{primitive}/schema`,
      name: "db-schema",
      title: "A database's schema",
      description: "primitive: a db primitive's id or name. Its tables and views with their columns, as JSON.",
      mimeType: "application/json",
    });
  }
  return out;
}

/** A subscription: the URI as the client wrote it, and what it names. */
interface Watched {
  primitive: string;
  path: string;
}

/** Checks the URI names a file or object this caller may read (the engine decides), and what. */
async function watchable(call: ToolInvoke, options: McpServerOptions, uri: string): Promise<Watched> {
  const address = parseResourceUri(uri);
  const p = await resolve(call, options, address);
  const target = refTo(options, p);
  if (p.type === "fs") {
    const path = filePath(address, uri);
    await call(READ_TOOL.fs, "fs.read", target, { path, stat: true });
    return { primitive: p.id, path };
  }
  if (p.type === "storage") {
    const key = objectKey(address, uri);
    await call(READ_TOOL.storage, "storage.read", target, { key, stat: true });
    return { primitive: p.id, path: key };
  }
  if (p.type === "db") throw new ServiceError("invalid_request", "uri: a db schema sends no change notices");
  throw new ServiceError("not_found", `resource '${uri}'`);
}

/**
 * Serves the session's files (fs), objects (storage) and db schemas as MCP resources: list
 * (paged), read, templates, and subscriptions (with `options.changes`). Every read goes through
 * `invoker.invoke` narrowed to the type's read tool and audited, as the tool call would.
 */
export function registerResources(server: McpServer, options: McpServerOptions): void {
  const call: ToolInvoke = (tool, op, target, input) =>
    options.invoker.invoke(
      tool === null ? options.principal : narrowTools(options.principal, [tool]),
      op,
      target,
      input,
      { audit: true },
    );
  const protocol = server.server;
  protocol.registerCapabilities({ resources: { subscribe: options.changes !== undefined, listChanged: false } });
  /** Runs a handler; a service error becomes the JSON-RPC error (`rpcError`). */
  const guard = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      throw rpcError(err);
    }
  };

  protocol.setRequestHandler(ListResourcesRequestSchema, (request) =>
    guard(() => listPage(call, options, request.params?.cursor)),
  );
  protocol.setRequestHandler(ReadResourceRequestSchema, (request) =>
    guard(() => readResource(call, options, request.params.uri)),
  );
  protocol.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: templates(options),
  }));

  const changes = options.changes;
  if (changes === undefined) return;
  const watched = new Map<string, Watched>();
  let listening: Promise<() => void> | undefined;
  const onNotice = (notice: ChangeNotice) => {
    for (const [uri, w] of watched) {
      if (noticeCovers(notice, w.primitive, w.path)) void protocol.sendResourceUpdated({ uri }).catch(() => {});
    }
  };
  protocol.setRequestHandler(SubscribeRequestSchema, (request) =>
    guard(async () => {
      const { uri } = request.params;
      const w = await watchable(call, options, uri);
      listening ??= changes.subscribe(options.principal.workspace, onNotice);
      await listening.catch((err) => {
        listening = undefined; // the next subscribe tries again
        throw err;
      });
      watched.set(uri, w);
      return {};
    }),
  );
  protocol.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    watched.delete(request.params.uri);
    return {};
  });
  const closed = protocol.onclose;
  protocol.onclose = () => {
    closed?.();
    watched.clear();
    void listening?.then(
      (stop) => stop(),
      () => {},
    );
  };
}
