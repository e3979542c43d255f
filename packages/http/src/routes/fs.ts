import { FS_CREATED, type FsRead } from "@prim/engine";
import { fsEntry, fsListing } from "@prim/wire/schemas";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { RouteResponses } from "../responses/index.js";
import type { RestRoute } from "../route.js";
import { contentLength, header } from "./storage.js";

const tag = "fs";
const base = "/v1/primitives/:id";
const path = { path: "*" } as const;

const readInput = (head: boolean) => (req: FastifyRequest) => ({ ...(req.query as Record<string, unknown>), head });

/**
 * A file answers with its bytes and the headers that keep a browser from running stored
 * content (nosniff, a sandbox CSP); a directory (or `list=1`) with `{ data, truncated }`;
 * `stat=1` with the entry.
 */
function respondRead(reply: FastifyReply, result: unknown): FastifyReply {
  const read = result as FsRead;
  if (read.kind === "entry") return reply.send(read.entry);
  if (read.kind === "list") return reply.send({ data: read.data, truncated: read.truncated });
  const { entry } = read;
  reply.header("ETag", entry.etag);
  reply.header("Last-Modified", new Date(entry.mtime).toUTCString());
  reply.header("X-Service-Mode", entry.mode);
  reply.header("X-Content-Type-Options", "nosniff");
  reply.header("Content-Security-Policy", "sandbox");
  reply.header("Content-Type", read.content_type);
  reply.header("Content-Length", entry.size);
  return reply.send(read.body ?? undefined);
}

/** A write or mkdir that created the entry answers 201; one that replaced or found it, 200. */
function respondEntry(reply: FastifyReply, result: unknown): FastifyReply {
  const created = (result as { [FS_CREATED]?: boolean })[FS_CREATED] === true;
  return reply.code(created ? 201 : 200).send(result);
}

const entryResponses: RouteResponses = {
  201: { description: "Created", json: fsEntry },
  200: { description: "Replaced, or already there", json: fsEntry },
};

const readResponses = (head: boolean): RouteResponses => ({
  200: head
    ? { description: "A file's or directory's headers", headers: ["ETag", "Content-Length", "X-Service-Mode"] }
    : {
        description: "A file's bytes; a directory listing (or list=1); the entry with stat=1",
        bytes: "*/*",
        json: z.union([fsEntry, fsListing]),
        headers: ["ETag", "Last-Modified", "X-Service-Mode"],
      },
});

const reads: RestRoute[] = (["GET", "HEAD"] as const).flatMap((method) => [
  {
    method,
    url: `${base}/files`,
    op: "fs.read",
    target: "id",
    from: "custom",
    query: ["list", "recursive", "stat"],
    input: readInput(method === "HEAD"),
    respond: respondRead,
    responses: readResponses(method === "HEAD"),
    summary: "List the root directory (list, recursive, stat)",
    tag,
  },
  {
    method,
    url: `${base}/files/*`,
    op: "fs.read",
    target: "id",
    pathInput: path,
    from: "custom",
    query: ["list", "recursive", "stat"],
    input: readInput(method === "HEAD"),
    respond: respondRead,
    responses: readResponses(method === "HEAD"),
    summary: "Read a file's bytes, or list a directory (list, recursive, stat)",
    tag,
  },
]);

export const FS_ROUTES: readonly RestRoute[] = [
  ...reads,
  {
    method: "PUT",
    url: `${base}/files/*`,
    op: "fs.write",
    target: "id",
    pathInput: path,
    from: "custom",
    rawBody: true,
    input: (req) => ({ body: req.raw, mode: header(req, "x-service-mode"), content_length: contentLength(req) }),
    respond: respondEntry,
    responses: entryResponses,
    summary: "Write a file (raw body, streamed; X-Service-Mode sets its mode; parents are created)",
    tag,
  },
  {
    method: "DELETE",
    url: `${base}/files/*`,
    op: "fs.delete",
    target: "id",
    pathInput: path,
    from: "query",
    status: 204,
    summary: "Delete a file or directory (recursive=1 for a non-empty directory)",
    tag,
  },
  {
    method: "POST",
    url: `${base}/move`,
    op: "fs.move",
    target: "id",
    from: "body",
    summary: "Move or rename a file or directory",
    tag,
  },
  {
    method: "POST",
    url: `${base}/mkdir`,
    op: "fs.mkdir",
    target: "id",
    from: "body",
    respond: respondEntry,
    responses: entryResponses,
    summary: "Make a directory and its parents (201; 200 if it exists)",
    tag,
  },
  {
    method: "GET",
    url: `${base}/glob`,
    op: "fs.glob",
    target: "id",
    from: "query",
    summary: "Paths matching a glob",
    tag,
  },
  {
    method: "GET",
    url: `${base}/search`,
    op: "fs.search",
    target: "id",
    from: "query",
    summary: "Full-text search over text files",
    tag,
  },
  {
    method: "POST",
    url: `${base}/forks`,
    op: "fs.fork",
    target: "id",
    from: "body",
    status: 201,
    summary: "Copy a directory tree inside the store (large files are shared, not copied)",
    tag,
  },
];
