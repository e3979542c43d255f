import { objectInfo } from "@prim/wire/schemas";
import type { FastifyReply, FastifyRequest } from "fastify";
import { isObjectRead, sendObject } from "../object-response.js";
import { objectReadResponses } from "../responses/index.js";
import type { RestRoute } from "../route.js";
import { contentLength, header } from "./storage.js";

const tag = "signed";
// A wildcard, not a named parameter: tokens for long keys exceed the router's parameter limit.
const url = "/v1/signed/*";

const input = (req: FastifyRequest) => ({
  token: (req.params as Record<string, string>)["*"],
  method: req.method,
  range: header(req, "range"),
  if_none_match: header(req, "if-none-match"),
  ...(req.method === "PUT"
    ? { body: req.raw, content_type: header(req, "content-type"), content_length: contentLength(req) }
    : {}),
});

const respond = (reply: FastifyReply, result: unknown) =>
  isObjectRead(result) ? sendObject(reply, result) : reply.send(result);

const signed = (method: RestRoute["method"], summary: string): RestRoute => ({
  method,
  url,
  op: "storage.signed",
  from: "custom",
  input,
  respond,
  responses:
    method === "PUT"
      ? { 200: { description: "The stored object", json: objectInfo } }
      : objectReadResponses(method === "HEAD"),
  rawBody: method === "PUT",
  summary,
  tag,
});

/** Credential-free routes: the path token is the capability (the authenticator answers the signed-URL principal). */
export const SIGNED_ROUTES: readonly RestRoute[] = [
  signed("GET", "Download through a signed URL"),
  signed("HEAD", "Headers through a signed URL"),
  signed("PUT", "Upload through a signed URL"),
];
