import { createReadStream } from "node:fs";
import type { GroupArchive } from "@prim/engine";
import { ServiceError } from "@prim/engine";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RestRoute } from "../route.js";
import { header } from "./storage.js";

const tag = "groups";
const group = { group: "group" } as const;

/** `bytes=N-` or `bytes=N-M` within `size`; anything else is ignored (the whole archive). */
function byteRange(value: string | undefined, size: number): { start: number; end: number } | null {
  const match = value === undefined ? null : /^bytes=(\d+)-(\d*)$/.exec(value.trim());
  if (match === null) return null;
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || start > end) {
    throw new ServiceError("range_not_satisfiable", `the archive has ${size} bytes; the range starts at ${start}`);
  }
  return { start, end };
}

/**
 * Sends a group archive, whole or from a `Range` (a resumed download names the archive with
 * `?archive=<id>`). The file stays until it expires, so a dropped download can go on.
 */
function sendArchive(reply: FastifyReply, result: unknown, req: FastifyRequest): FastifyReply {
  const { archive } = result as GroupArchive;
  reply.header("Content-Type", "application/x-tar");
  reply.header("Content-Disposition", `attachment; filename="${archive.filename.replace(/"/g, "")}"`);
  reply.header("ETag", `"${archive.sha256}"`);
  reply.header("Accept-Ranges", "bytes");
  reply.header("X-Prim-Archive-Id", archive.id);
  reply.header("X-Prim-Archive-Sha256", archive.sha256);
  reply.header("X-Prim-Archive-Size", String(archive.size));
  reply.header("X-Prim-Archive-Expires", String(archive.expires_at));
  let range: { start: number; end: number } | null;
  try {
    range = byteRange(header(req, "range"), archive.size);
  } catch (err) {
    reply.header("Content-Range", `bytes */${archive.size}`);
    throw err;
  }
  if (range === null) {
    reply.header("Content-Length", String(archive.size));
    return reply.send(createReadStream(archive.path, { highWaterMark: 1024 * 1024 }));
  }
  reply.code(206);
  reply.header("Content-Range", `bytes ${range.start}-${range.end}/${archive.size}`);
  reply.header("Content-Length", String(range.end - range.start + 1));
  return reply.send(createReadStream(archive.path, { ...range, highWaterMark: 1024 * 1024 }));
}

const archiveHeaders = [
  "ETag",
  "X-Prim-Archive-Id",
  "X-Prim-Archive-Sha256",
  "X-Prim-Archive-Size",
  "X-Prim-Archive-Expires",
];

export const ARCHIVE_ROUTES: readonly RestRoute[] = [
  {
    method: "GET",
    url: "/v1/groups/:group/export",
    op: "group.export",
    target: "group",
    from: "query",
    respond: sendArchive,
    responses: {
      200: { description: "The group archive (ustar)", bytes: "application/x-tar", headers: archiveHeaders },
      206: {
        description: "Part of the archive (Range, with ?archive=<id>)",
        bytes: "application/x-tar",
        headers: ["Content-Range", ...archiveHeaders],
      },
    },
    summary: "Download the group as one archive (every primitive and its blobs)",
    description:
      "Account-level. Builds a consistent archive of the group; its vault values are sealed for `recipient` (another engine's transfer key from its GET /v1/groups/{group}/import), by default for this engine. In the cloud, values go to a key other than the workspace's own only while its owner allows secret export, and only for a workspace key or an owner; otherwise the archive carries each secret's name, version and grant without its value (imported, it needs a value: needs_value in listings, 409 conflict on use). The audit entry names the recipient key's fingerprint. The archive is kept for an hour: resume a dropped download with `archive=<X-Prim-Archive-Id>` and a Range header, and check the whole file against X-Prim-Archive-Sha256. Counted like a snapshot; 403 plan_limit on Starter.",
    tag,
  },
  {
    method: "GET",
    url: "/v1/groups/:group/import",
    op: "group.import_status",
    pathInput: group,
    from: "query",
    summary: "This engine's transfer key, and how much of an upload (sha256=) arrived",
    tag,
  },
  {
    method: "POST",
    url: "/v1/groups/:group/import",
    op: "group.import",
    pathInput: group,
    from: "custom",
    query: ["sha256", "offset", "replace"],
    rawBody: true,
    input: (req) => ({ ...(req.query as Record<string, unknown>), body: req.raw }),
    status: 201,
    summary: "Import a group archive (raw body), resumable from an offset",
    description:
      "Account-level. The body is the archive, or its rest from `offset` (GET this path with sha256= to learn how much arrived). Checked against `sha256` once complete, then every entry against the manifest; anything wrong is 400 with nothing imported. The group is created if missing; one that holds primitives is refused (409) unless replace=true, which snapshots each primitive it replaces first (label pre-import-<ms>). Counted like a snapshot; 403 plan_limit on Starter.",
    tag,
  },
];
