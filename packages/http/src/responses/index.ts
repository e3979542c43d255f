import { resultSchema } from "@prim/wire/schemas";
import type { z } from "zod";

/** One documented answer of a route: JSON of a schema, raw bytes of a content type, or both. */
export interface RouteResponse {
  description: string;
  json?: z.ZodType;
  /** Content type of a raw body (`*\/*` for stored bytes). */
  bytes?: string;
  /** Response headers worth naming (Content-Range, ETag). */
  headers?: readonly string[];
}

/** Answers by status code. */
export type RouteResponses = Readonly<Record<number, RouteResponse>>;

/**
 * What a route answers: its own `responses` where it reshapes the operation's answer (bytes,
 * several statuses), else the operation's JSON result under the route's status. A route with
 * neither is a programming error, caught when the OpenAPI document is built (every test run).
 */
export function routeResponses(route: {
  op: Parameters<typeof resultSchema>[0];
  url: string;
  method: string;
  status?: number;
  responses?: RouteResponses;
}): RouteResponses {
  if (route.responses !== undefined) return route.responses;
  if (route.status === 204) return { 204: { description: "No content" } };
  const json = resultSchema(route.op);
  if (json === undefined) throw new Error(`route ${route.method} ${route.url}: no response schema for ${route.op}`);
  return { [route.status ?? 200]: { description: "Success", json } };
}

/** The answers of an object read (storage and signed URLs). */
export function objectReadResponses(head: boolean, stat?: z.ZodType): RouteResponses {
  const body = head ? {} : { bytes: "*/*" };
  return {
    200: {
      description: stat === undefined ? "The object" : "The object's bytes, or its ObjectInfo with stat=1",
      ...body,
      ...(stat === undefined || head ? {} : { json: stat }),
      headers: ["ETag", "Last-Modified", "Accept-Ranges", "Content-Length"],
    },
    206: { description: "Part of the object (Range)", ...body, headers: ["Content-Range", "ETag"] },
    304: { description: "Not modified (If-None-Match)", headers: ["ETag"] },
  };
}

export { resultSchema };
