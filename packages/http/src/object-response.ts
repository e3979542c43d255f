import type { ObjectRead } from "@prim/engine";
import type { FastifyReply } from "fastify";

/** True for a storage read result (as opposed to ObjectInfo JSON). */
export function isObjectRead(result: unknown): result is ObjectRead {
  return typeof result === "object" && result !== null && "status" in result && "info" in result;
}

/**
 * Sends an object: its headers (ETag, type, length, ranges, metadata, and the two that keep a
 * browser from running stored content: nosniff and a sandbox CSP) and its bytes.
 */
export function sendObject(reply: FastifyReply, read: ObjectRead): FastifyReply {
  const { info } = read;
  reply.header("ETag", info.etag);
  reply.header("Last-Modified", new Date(info.updated_at).toUTCString());
  reply.header("Accept-Ranges", "bytes");
  reply.header("X-Content-Type-Options", "nosniff");
  reply.header("Content-Security-Policy", "sandbox");
  for (const [name, value] of Object.entries(info.metadata)) reply.header(`x-object-meta-${name}`, value);
  if (read.status === 304) return reply.code(304).send();
  reply.header("Content-Type", info.content_type);
  if (read.range !== null) {
    reply.header("Content-Range", `bytes ${read.range.start}-${read.range.end}/${info.size}`);
    reply.header("Content-Length", read.range.end - read.range.start + 1);
  } else {
    reply.header("Content-Length", info.size);
  }
  reply.code(read.status);
  return reply.send(read.body ?? undefined);
}
