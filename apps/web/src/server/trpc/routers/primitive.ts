import { Readable } from "node:stream";
import {
  type FsRead,
  invalid,
  narrowTools,
  type OperationName,
  type PrimitiveInfo,
  type QueryResult,
  ServiceError,
  type SnapshotInfo,
} from "@prim/wire";
import { z } from "zod";
import { router, workspaceProcedure } from "../init";

const target = z.object({ primitive: z.string().min(1) });

/** A paged view's page: the engine checks `limit` against the list's own maximum. */
const pageArgs = z.object({ limit: z.number().int().min(1).optional(), cursor: z.string().min(1).optional() });

/**
 * The read-only views of the type browsers: each a name, the engine operation it calls and the
 * arguments it takes (validated here, then again by the operation).
 */
const VIEWS = {
  "queue.queues": { op: "queue.queues", args: z.object({}) },
  "queue.messages": {
    op: "queue.messages",
    args: z.object({
      queue: z.string().min(1),
      status: z.enum(["ready", "leased", "done", "dead"]).optional(),
      cursor: z.string().optional(),
      limit: z.number().int().positive().optional(),
    }),
  },
  "vault.list": { op: "vault.list", args: pageArgs },
  "vault.grants": { op: "vault.grants", args: pageArgs },
  "vault.requests": { op: "vault.requests", args: z.object({}) },
  "memory.recall": { op: "memory.recall", args: z.object({ query: z.string().min(1).max(2000) }) },
  "fs.list": {
    op: "fs.read",
    args: z.object({ path: z.string().min(1).default("/"), list: z.literal(true).default(true) }),
  },
  "storage.list": {
    op: "storage.list",
    args: z.object({
      prefix: z.string().default(""),
      delimiter: z.literal("/").optional(),
      cursor: z.string().optional(),
      limit: z.number().int().positive().optional(),
    }),
  },
} as const;
export type BrowseView = keyof typeof VIEWS;

/**
 * The changes the type browsers make (and the reads they make on demand): each an engine
 * operation called as is — its input is validated by the operation itself, and the primitive's
 * type (400 `wrong_type`), the caller's scope and role, limits and audit are `engine.invoke`'s.
 * Nothing account-level is here: pause, rename, delete and snapshots have their own procedures.
 */
export const ACTIONS = [
  ...["kv.get", "kv.set", "kv.delete"],
  ...["fs.write", "fs.delete", "fs.mkdir", "fs.move"],
  ...["queue.send", "queue.purge", "queue.requeue", "queue.get"],
  ...["vault.put", "vault.delete"],
  ...["memory.remember", "memory.list", "memory.get", "memory.forget", "memory.supersede", "memory.history"],
  ...["storage.delete"],
  ...["db.query", "db.batch", "db.tables", "db.table"],
] as const satisfies readonly OperationName[];
export type Action = (typeof ACTIONS)[number];

/**
 * One primitive: its record, pause/resume (admins: account-level in the engine), snapshots
 * (list, take, restore) and the db console (`db.query`; read-only for members). Everything through the cell's `Invoker` as `user:<id>`.
 */
export const primitiveRouter = router({
  get: workspaceProcedure("primitive.get")
    .input(target)
    .query(({ ctx, input }) => ctx.invoker.invoke<PrimitiveInfo>(ctx.principal, "primitive.get", input.primitive, {})),
  pause: workspaceProcedure("primitive.pause")
    .input(target.extend({ paused: z.boolean() }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<PrimitiveInfo>(
        ctx.principal,
        input.paused ? "primitive.pause" : "primitive.resume",
        input.primitive,
        {},
      ),
    ),
  /** Rename and/or move to another group of the workspace (account-level in the engine). */
  update: workspaceProcedure("primitive.update")
    .input(target.extend({ name: z.string().min(1).optional(), group: z.string().min(1).optional() }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<PrimitiveInfo>(ctx.principal, "primitive.update", input.primitive, {
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.group === undefined ? {} : { group: input.group }),
      }),
    ),
  /** A copy under a new name (in the same group unless another is named). */
  fork: workspaceProcedure("primitive.fork")
    .input(target.extend({ name: z.string().min(1), group: z.string().min(1).optional() }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<PrimitiveInfo>(ctx.principal, "primitive.fork", input.primitive, {
        name: input.name,
        ...(input.group === undefined ? {} : { group: input.group }),
      }),
    ),
  snapshots: workspaceProcedure("primitive.snapshots")
    .input(target)
    .query(({ ctx, input }) =>
      ctx.invoker.invoke<{ data: SnapshotInfo[]; next_cursor: string | null }>(
        ctx.principal,
        "primitive.snapshots",
        input.primitive,
        { limit: 50 },
      ),
    ),
  snapshot: workspaceProcedure("primitive.snapshot")
    .input(target.extend({ name: z.string().max(64).optional() }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<SnapshotInfo>(
        ctx.principal,
        "primitive.snapshot",
        input.primitive,
        input.name === undefined || input.name === "" ? {} : { name: input.name },
      ),
    ),
  restore: workspaceProcedure("primitive.restore")
    .input(target.extend({ snapshot: z.string().min(1) }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<SnapshotInfo>(ctx.principal, "primitive.restore", input.primitive, {
        snapshot: input.snapshot,
      }),
    ),
  /** A type browser's view (VIEWS): the operation's answer as is. */
  browse: workspaceProcedure("primitive.browse")
    .input(
      target.extend({
        view: z.enum(Object.keys(VIEWS) as [BrowseView, ...BrowseView[]]),
        args: z.record(z.string(), z.unknown()).default({}),
      }),
    )
    .query(({ ctx, input }) => {
      const view = VIEWS[input.view];
      const args = view.args.parse(input.args);
      return ctx.invoker.invoke<unknown>(ctx.principal, view.op, input.primitive, args);
    }),
  /**
   * A file of an fs primitive, for the browser's preview: UTF-8 text as text, PNG/JPEG/GIF/WebP
   * images as base64, anything else (or over PREVIEW_BYTES) only described.
   */
  preview: workspaceProcedure("primitive.preview")
    .input(target.extend({ path: z.string().min(1).max(4096) }))
    .query(async ({ ctx, input }) => {
      const read = await ctx.invoker.invoke<FsRead>(ctx.principal, "fs.read", input.primitive, { path: input.path });
      if (read.kind !== "file") return { kind: "directory" as const, path: input.path };
      return previewOf(read);
    }),
  /**
   * One of ACTIONS on the primitive. A member's db calls are narrowed to `db_query` (read-only),
   * as the console's are.
   */
  act: workspaceProcedure("primitive.act")
    .input(
      target.extend({
        op: z.enum(ACTIONS),
        args: z.record(z.string(), z.unknown()).default({}),
      }),
    )
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<unknown>(
        ctx.role === "member" && input.op.startsWith("db.") ? narrowTools(ctx.principal, ["db_query"]) : ctx.principal,
        input.op,
        input.primitive,
        input.op === "fs.write" ? fsWriteArgs(input.args) : input.args,
      ),
    ),
  /** A dead (or any) job back to ready. */
  requeue: workspaceProcedure("primitive.requeue")
    .input(target.extend({ queue: z.string().min(1), job: z.string().min(1) }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke(ctx.principal, "queue.requeue", input.primitive, {
        queue: input.queue,
        job: input.job,
      }),
    ),
  /**
   * A signed URL to download an object (5 minutes) or upload one (PUT, 15 minutes) at the REST
   * API (the engine answers a path; it is completed with the API's public origin).
   */
  sign: workspaceProcedure("primitive.sign")
    .input(target.extend({ key: z.string().min(1).max(1024), method: z.enum(["GET", "PUT"]) }))
    .mutation(async ({ ctx, input }) => {
      const signed = await ctx.invoker.invoke<{ url: string; expires_at: number }>(
        ctx.principal,
        "storage.presign",
        input.primitive,
        { key: input.key, method: input.method, expires_in: input.method === "GET" ? "5m" : "15m" },
      );
      return { ...signed, url: new URL(signed.url, ctx.apiUrl).href };
    }),
  /** Owners and admins may write through the console; a member's is narrowed to `db_query` (read-only). */
  dbQuery: workspaceProcedure("primitive.dbQuery")
    .input(target.extend({ sql: z.string().min(1, "a statement is required").max(100_000) }))
    .mutation(({ ctx, input }) => {
      return ctx.invoker.invoke<QueryResult>(
        ctx.role === "member" ? narrowTools(ctx.principal, ["db_query"]) : ctx.principal,
        "db.query",
        input.primitive,
        { sql: input.sql },
      );
    }),
});

/** The most a file written from the browser holds (larger files go through the API or the CLI). */
export const WRITE_BYTES = 10 * 1024 * 1024;

/**
 * `fs.write` from the browser: the contents as `text` (UTF-8) or `base64` (an uploaded file)
 * instead of the operation's stream; every other argument goes to the operation as is.
 */
function fsWriteArgs(args: Record<string, unknown>): Record<string, unknown> {
  const { text, base64, ...rest } = args;
  let bytes: Buffer;
  if (typeof text === "string" && base64 === undefined) bytes = Buffer.from(text, "utf8");
  else if (typeof base64 === "string" && text === undefined) bytes = Buffer.from(base64, "base64");
  else throw invalid("body: give the contents as `text` or as `base64`");
  if (bytes.length > WRITE_BYTES) {
    throw new ServiceError(
      "payload_too_large",
      `file is ${bytes.length} bytes; the dashboard writes at most ${WRITE_BYTES} (use the API or the CLI)`,
    );
  }
  return { ...rest, body: Readable.from([bytes]), content_length: bytes.length };
}

/** Files up to this size are previewed (larger ones are described, never read whole). */
export const PREVIEW_BYTES = 256 * 1024;
const IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export type Preview =
  | { kind: "directory"; path: string }
  | { kind: "text"; path: string; size: number; content_type: string; text: string }
  | { kind: "image"; path: string; size: number; content_type: string; base64: string }
  | { kind: "binary" | "too_large"; path: string; size: number; content_type: string };

async function previewOf(read: Extract<FsRead, { kind: "file" }>): Promise<Preview> {
  const { path, size } = read.entry;
  const about = { path, size, content_type: read.content_type };
  const body = read.body;
  if (size > PREVIEW_BYTES || body === null) {
    if (body instanceof Readable) body.destroy();
    return { kind: "too_large", ...about };
  }
  const chunks: Buffer[] = [];
  if (Buffer.isBuffer(body)) chunks.push(body);
  else for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  const bytes = Buffer.concat(chunks);
  const type = read.content_type.split(";")[0]?.trim().toLowerCase() ?? "";
  if (IMAGES.has(type)) return { kind: "image", ...about, base64: bytes.toString("base64") };
  if (!bytes.includes(0)) {
    try {
      return { kind: "text", ...about, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
    } catch {
      // not UTF-8: described below
    }
  }
  return { kind: "binary", ...about };
}
