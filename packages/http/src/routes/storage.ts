import { objectInfo } from "@prim/wire/schemas";
import type { FastifyReply, FastifyRequest } from "fastify";
import { isObjectRead, sendObject } from "../object-response.js";
import { publicOrigin } from "../public-url.js";
import { objectReadResponses } from "../responses/index.js";
import type { RestRoute } from "../route.js";

const tag = "storage";
const base = "/v1/primitives/:id";
const key = { key: "*" } as const;

function header(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** `x-object-meta-<name>: value` headers as a metadata object (names lowercase). */
function metadataFromHeaders(req: FastifyRequest): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith("x-object-meta-") && name.length > 14) {
      metadata[name.slice(14)] = Array.isArray(value) ? value.join(",") : String(value);
    }
  }
  return metadata;
}

function contentLength(req: FastifyRequest): number | undefined {
  const value = header(req, "content-length");
  return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
}

const readInput = (head: boolean) => (req: FastifyRequest) => ({
  ...(req.query as Record<string, unknown>),
  range: header(req, "range"),
  if_none_match: header(req, "if-none-match"),
  head,
});

/** An object read answers with its bytes, or ObjectInfo JSON for `?stat=1`. */
function respondRead(reply: FastifyReply, result: unknown, req: FastifyRequest): FastifyReply {
  const stat = (req.query as Record<string, unknown>).stat;
  if (isObjectRead(result) && (stat === "1" || stat === "true")) return reply.send(result.info);
  return isObjectRead(result) ? sendObject(reply, result) : reply.send(result);
}

function respondPresign(reply: FastifyReply, result: unknown, req: FastifyRequest): FastifyReply {
  const presigned = result as { url: string };
  return reply.send({ ...presigned, url: `${publicOrigin(req)}${presigned.url}` });
}

export const STORAGE_ROUTES: readonly RestRoute[] = [
  {
    method: "GET",
    url: `${base}/objects`,
    op: "storage.list",
    target: "id",
    from: "query",
    summary: "List objects",
    tag,
  },
  {
    method: "GET",
    url: `${base}/objects/*`,
    op: "storage.read",
    target: "id",
    pathInput: key,
    from: "custom",
    query: ["stat"],
    input: readInput(false),
    respond: respondRead,
    responses: objectReadResponses(false, objectInfo),
    summary: "Read an object (Range, If-None-Match; ?stat=1 for ObjectInfo)",
    tag,
  },
  {
    method: "HEAD",
    url: `${base}/objects/*`,
    op: "storage.read",
    target: "id",
    pathInput: key,
    from: "custom",
    input: readInput(true),
    respond: respondRead,
    responses: objectReadResponses(true),
    summary: "An object's headers",
    tag,
  },
  {
    method: "PUT",
    url: `${base}/objects/*`,
    op: "storage.put",
    target: "id",
    pathInput: key,
    from: "custom",
    rawBody: true,
    input: (req) => ({
      body: req.raw,
      content_type: header(req, "content-type"),
      metadata: metadataFromHeaders(req),
      if_match: header(req, "if-match"),
      if_none_match: header(req, "if-none-match"),
      content_length: contentLength(req),
    }),
    summary: "Write an object (raw body, streamed)",
    tag,
  },
  {
    method: "DELETE",
    url: `${base}/objects/*`,
    op: "storage.delete",
    target: "id",
    pathInput: key,
    from: "custom",
    input: (req) => ({ if_match: header(req, "if-match") }),
    status: 204,
    summary: "Delete an object (204 even when absent)",
    tag,
  },
  {
    method: "POST",
    url: `${base}/copy`,
    op: "storage.copy",
    target: "id",
    from: "body",
    summary: "Copy an object",
    tag,
  },
  {
    method: "POST",
    url: `${base}/presign`,
    op: "storage.presign",
    target: "id",
    from: "body",
    respond: respondPresign,
    summary: "Make a signed URL",
    tag,
  },
  {
    method: "POST",
    url: `${base}/presign/revoke`,
    op: "storage.revoke",
    target: "id",
    from: "body",
    summary: "Invalidate every signed URL of the store",
    tag,
  },
];

export { contentLength, header, respondRead };
