import { type FsEntry, type FsRead, ServiceError } from "@prim/wire";
import { z } from "zod";
import { LIST_PAGE, limitSchema, queryBoolean } from "../../core/pagination.js";
import { type AnyOperation, dataOp } from "../operation.js";
import { readPath, writeFile } from "./files.js";
import { Glob } from "./glob.js";
import type { FsHandle } from "./handle.js";
import { GLOB_PAGE, MAX_FILE_BYTES, modeSchema, normalizePath, pathSchema, ROOT } from "./limits.js";
import type { SearchHit } from "./search.js";
import { type EntryRow, toEntry } from "./store.js";

const fsOp = dataOp<FsHandle>("fs");

/**
 * Marks an entry that a write or mkdir created (REST answers 201) rather than replaced or
 * found (200). A symbol, so it never shows in the JSON.
 */
export const FS_CREATED: unique symbol = Symbol("fs.created");
export type MaybeCreated = FsEntry & { [FS_CREATED]?: boolean };

function entryOf(row: EntryRow, created: boolean): MaybeCreated {
  const entry: MaybeCreated = toEntry(row);
  if (created) entry[FS_CREATED] = true;
  return entry;
}

export const fsRead = fsOp({
  name: "fs.read",
  access: "read",
  writesStorage: false,
  tool: "fs_read",
  input: z.strictObject({
    path: pathSchema.default(ROOT),
    list: queryBoolean.default(false),
    recursive: queryBoolean.default(false),
    stat: queryBoolean.default(false),
    head: z.boolean().default(false),
  }),
  run(ctx, input): FsRead {
    const path = normalizePath(input.path);
    ctx.audit.target = path;
    return readPath(ctx.store, ctx.services.blobs, path, input);
  },
});

export const fsWrite = fsOp({
  name: "fs.write",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: true,
  tool: "fs_write",
  changes: (input) => [{ path: normalizePath(input.path) }],
  input: z.strictObject({
    path: pathSchema,
    body: z.custom<AsyncIterable<Buffer>>((v) => typeof v === "object" && v !== null && Symbol.asyncIterator in v),
    mode: modeSchema.optional(),
    content_length: z.number().int().min(0).optional(),
  }),
  async run(ctx, input): Promise<MaybeCreated> {
    const path = normalizePath(input.path);
    ctx.audit.target = path;
    if (input.content_length !== undefined && input.content_length > MAX_FILE_BYTES) {
      throw new ServiceError(
        "payload_too_large",
        `file is ${input.content_length} bytes; the limit is ${MAX_FILE_BYTES}`,
      );
    }
    const { row, created } = await writeFile(ctx.store, ctx.services, {
      path,
      body: input.body,
      mode: input.mode ?? null,
      contentLength: input.content_length,
    });
    ctx.audit.detail = { size: row.size, created };
    return entryOf(row, created);
  },
});

export const fsDelete = fsOp({
  name: "fs.delete",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "fs_write",
  changes: (input) => [{ path: normalizePath(input.path), subtree: input.recursive }],
  input: z.strictObject({ path: pathSchema, recursive: queryBoolean.default(false) }),
  run(ctx, input): void {
    const path = normalizePath(input.path);
    ctx.audit.target = path;
    if (path === ROOT) throw new ServiceError("invalid_request", "path: the root cannot be deleted");
    const { blobs } = ctx.store.store.remove(path, input.recursive);
    if (blobs > 0) ctx.services.blobCollector.schedule();
    if (input.recursive) ctx.audit.detail = { recursive: true };
  },
});

export const fsMkdir = fsOp({
  name: "fs.mkdir",
  access: "write",
  destructive: false,
  idempotent: true,
  writesStorage: true,
  tool: "fs_write",
  changes: (input) => [{ path: normalizePath(input.path) }],
  input: z.strictObject({ path: pathSchema }),
  run(ctx, input): MaybeCreated {
    const path = normalizePath(input.path);
    ctx.audit.target = path;
    const { row, created } = ctx.store.store.mkdir(path);
    ctx.audit.detail = { created };
    return entryOf(row, created);
  },
});

export const fsMove = fsOp({
  name: "fs.move",
  access: "write",
  destructive: true,
  idempotent: false,
  writesStorage: false,
  tool: "fs_write",
  changes: (input) => [
    { path: normalizePath(input.from, "from"), subtree: true },
    { path: normalizePath(input.to, "to"), subtree: true },
  ],
  input: z.strictObject({ from: pathSchema, to: pathSchema, overwrite: z.boolean().default(false) }),
  run(ctx, input): FsEntry {
    const from = normalizePath(input.from, "from");
    const to = normalizePath(input.to, "to");
    ctx.audit.target = to;
    ctx.audit.detail = { from };
    const { row, droppedBlob } = ctx.store.tree.move(from, to, input.overwrite);
    if (droppedBlob) ctx.services.blobCollector.schedule();
    return toEntry(row);
  },
});

export const fsGlob = fsOp({
  name: "fs.glob",
  access: "read",
  writesStorage: false,
  tool: "fs_search",
  input: z.strictObject({ pattern: z.string(), limit: limitSchema(GLOB_PAGE) }),
  run(ctx, input): { data: string[] } {
    ctx.audit.target = input.pattern;
    const glob = new Glob(input.pattern);
    const data: string[] = [];
    for (const path of ctx.store.store.treePaths(glob.base)) {
      if (path === ROOT || !glob.matches(path)) continue;
      data.push(path);
      if (data.length === input.limit) break;
    }
    return { data };
  },
});

export const fsSearch = fsOp({
  name: "fs.search",
  access: "read",
  writesStorage: false,
  tool: "fs_search",
  input: z.strictObject({
    q: z.string().min(1).max(1024),
    path: pathSchema.default(ROOT),
    limit: limitSchema(LIST_PAGE),
  }),
  run(ctx, input): { data: SearchHit[] } {
    const path = normalizePath(input.path);
    ctx.audit.target = path;
    return { data: ctx.store.search.search(input.q, path, input.limit) };
  },
});

export const fsFork = fsOp({
  name: "fs.fork",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "fs_fork",
  // The copy's root is known once it ran (the audit target).
  changes: (_input, audit) => (audit.target === null ? [] : [{ path: audit.target, subtree: true }]),
  input: z.strictObject({ from: pathSchema, to: pathSchema.optional() }),
  run(ctx, input): { path: string; files: number } {
    const from = normalizePath(input.from, "from");
    const to = input.to === undefined ? undefined : normalizePath(input.to, "to");
    ctx.audit.target = to ?? null;
    ctx.audit.detail = { from };
    const result = ctx.store.tree.fork(from, to);
    ctx.audit.target = result.path;
    ctx.audit.detail = { from, files: result.files };
    return result;
  },
});

export const FS_OPERATIONS: readonly AnyOperation[] = [
  fsRead,
  fsWrite,
  fsDelete,
  fsMkdir,
  fsMove,
  fsGlob,
  fsSearch,
  fsFork,
];
