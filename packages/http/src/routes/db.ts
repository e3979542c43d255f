import { createReadStream, rmSync } from "node:fs";
import type { FileDownload } from "@prim/engine";
import type { FastifyReply } from "fastify";
import type { RestRoute } from "../route.js";

const tag = "db";
const base = "/v1/primitives/:id";

/** Streams an exported file, then deletes it. */
export function sendDownload(reply: FastifyReply, result: unknown): FastifyReply {
  const { download } = result as FileDownload;
  const stream = createReadStream(download.path);
  const cleanup = () => rmSync(download.path, { force: true });
  stream.once("close", cleanup);
  reply.header("Content-Type", download.contentType);
  reply.header("Content-Disposition", `attachment; filename="${download.filename.replace(/"/g, "")}"`);
  return reply.send(stream);
}

export const DB_ROUTES: readonly RestRoute[] = [
  {
    method: "POST",
    url: `${base}/query`,
    op: "db.query",
    target: "id",
    from: "body",
    summary: "Run one SQL statement",
    tag,
  },
  { method: "POST", url: `${base}/exec`, op: "db.exec", target: "id", from: "body", summary: "Alias of /query", tag },
  {
    method: "POST",
    url: `${base}/batch`,
    op: "db.batch",
    target: "id",
    from: "body",
    summary: "Run statements in one transaction",
    tag,
  },
  {
    method: "GET",
    url: `${base}/tables`,
    op: "db.tables",
    target: "id",
    from: "query",
    summary: "Tables and views",
    tag,
  },
  {
    method: "GET",
    url: `${base}/tables/:table`,
    op: "db.table",
    target: "id",
    pathInput: { table: "table" },
    from: "query",
    summary: "A table's columns and SQL",
    tag,
  },
  {
    method: "POST",
    url: `${base}/branches`,
    op: "db.branch.create",
    target: "id",
    from: "body",
    status: 201,
    summary: "Branch main",
    tag,
  },
  {
    method: "GET",
    url: `${base}/branches`,
    op: "db.branch.list",
    target: "id",
    from: "query",
    summary: "List branches",
    tag,
  },
  {
    method: "POST",
    url: `${base}/branches/:branch/promote`,
    op: "db.branch.promote",
    target: "id",
    pathInput: { branch: "branch" },
    from: "body",
    summary: "Make a branch main (409 branch_conflict if main changed, unless force)",
    tag,
  },
  {
    method: "DELETE",
    url: `${base}/branches/:branch`,
    op: "db.branch.delete",
    target: "id",
    pathInput: { branch: "branch" },
    from: "none",
    summary: "Discard a branch",
    tag,
  },
  {
    method: "GET",
    url: `${base}/export`,
    op: "primitive.export",
    target: "id",
    from: "none",
    respond: sendDownload,
    responses: { 200: { description: "A SQLite database file", bytes: "application/vnd.sqlite3" } },
    summary: "Download a SQLite file (db, kv, storage)",
    tag: "primitives",
  },
];
