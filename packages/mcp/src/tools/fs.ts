import { type FsRead, toolInfo } from "@prim/wire";
import { z } from "zod";
import { contentBody, encodeBytes, readCapped } from "../context.js";
import { encodingArg, primitiveArg } from "./common.js";
import { fsReadResult, noResult } from "./output.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("fs");
const path = z.string().describe("A path like '/src/app.ts' (the root is '/').");

async function fileContent(read: FsRead) {
  if (read.kind === "list") return { data: read.data, truncated: read.truncated };
  if (read.kind === "entry" || read.body === null) return read.entry;
  const bytes = await readCapped(read.body, read.entry.size, `file '${read.entry.path}'`, "Read it over REST instead.");
  return { ...read.entry, content_type: read.content_type, content: encodeBytes(bytes) };
}

export const FS_TOOLS: ToolSpec[] = [
  {
    ...toolInfo("fs_read"),
    shape: {
      primitive: p,
      path: path.optional(),
      list: z.boolean().optional().describe("List even if the path is a file."),
      recursive: z.boolean().optional().describe("List the whole subtree."),
      stat: z.boolean().optional().describe("Only the entry, no content."),
    },
    actions: {
      read: { op: "fs.read", fields: ["path", "list", "recursive", "stat"], output: fileContent, result: fsReadResult },
    },
  },
  {
    ...toolInfo("fs_write"),
    shape: {
      primitive: p,
      action: z.enum(["write", "mkdir", "move", "delete"]).optional().describe('Default "write".'),
      path: path.optional(),
      content: z.string().optional().describe("The file's contents (see `encoding`)."),
      encoding: encodingArg,
      mode: z.string().optional().describe('Permissions as octal, e.g. "644" or "755".'),
      from: z.string().optional().describe('"move": the path to move.'),
      to: z.string().optional().describe('"move": the new path.'),
      overwrite: z.boolean().optional().describe('"move": replace what is at `to`.'),
      recursive: z.boolean().optional().describe('"delete": remove a directory with its contents.'),
    },
    actions: {
      write: {
        op: "fs.write",
        fields: ["path", "mode"],
        input: contentBody,
      },
      mkdir: { op: "fs.mkdir", fields: ["path"] },
      move: { op: "fs.move", fields: ["from", "to", "overwrite"] },
      delete: { op: "fs.delete", fields: ["path", "recursive"], result: noResult },
    },
  },
  {
    ...toolInfo("fs_search"),
    shape: {
      primitive: p,
      action: z.enum(["search", "glob"]).optional().describe('Default "search".'),
      q: z.string().optional().describe("Words to find."),
      path: z.string().optional().describe("Search only this file or directory."),
      pattern: z.string().optional().describe('Glob pattern, e.g. "src/**/*.ts".'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .optional()
        .describe("Results at most: search default 50, max 200; glob default 100, max 1000."),
    },
    actions: {
      search: { op: "fs.search", fields: ["q", "path", "limit"] },
      glob: { op: "fs.glob", fields: ["pattern", "limit"] },
    },
  },
  {
    ...toolInfo("fs_fork"),
    shape: { primitive: p, from: path, to: z.string().optional().describe("Where the copy goes.") },
    actions: { fork: { op: "fs.fork", fields: ["from", "to"] } },
  },
];
