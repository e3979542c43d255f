import { ERROR_STATUS, MAX_JSON_DEPTH, MAX_RESPONSE_BYTES_PER_CALL } from "@prim/engine";
import { z } from "zod";
import { JSON_BODY_LIMIT } from "./limits.js";
import { type RouteResponse, routeResponses } from "./responses/index.js";
import type { OperationLookup, RestRoute } from "./route.js";

type JsonSchema = { properties?: Record<string, unknown>; required?: string[]; [k: string]: unknown };

/** The spec's error shape, one schema every route's error answers point at. */
const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  additionalProperties: false,
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      additionalProperties: false,
      properties: { code: { type: "string", enum: Object.keys(ERROR_STATUS) }, message: { type: "string" } },
    },
  },
};
const ERROR_REF = { $ref: "#/components/responses/Error" };

/** Limits every route shares, stated once in the document's description. */
const API_LIMITS = [
  "Errors are `{ error: { code, message } }`; every response carries `X-Request-Id`.",
  `JSON request bodies: at most ${JSON_BODY_LIMIT / 1024 / 1024} MiB (413 payload_too_large), and arrays/objects nested at most ${MAX_JSON_DEPTH} levels deep, the body itself counting as one (400 invalid_request).`,
  `Multi-item answers carry at most about ${MAX_RESPONSE_BYTES_PER_CALL / 1024 / 1024} MiB: a page of a listing ends early and its next_cursor continues it; POST /mget answers the keys that fit with truncated: true; a receive leases fewer jobs than max; a recall returns fewer memories than limit.`,
].join("\n\n");

/** `/v1/primitives/:id/keys/*` → `/v1/primitives/{id}/keys/{key}`. */
export function openApiPath(route: Pick<RestRoute, "url" | "pathInput">): string {
  const wildcard = Object.entries(route.pathInput ?? {}).find(([, param]) => param === "*")?.[0] ?? "path";
  return route.url.replace(/:([A-Za-z_]+)/g, "{$1}").replace(/\*$/, `{${wildcard}}`);
}

function pathParams(route: RestRoute): string[] {
  const names = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);
  for (const [field, param] of Object.entries(route.pathInput ?? {})) if (param === "*") names.push(field);
  return names;
}

/**
 * A response schema as OpenAPI JSON Schema: named shapes (zod `meta({ id })`) move to
 * `components.schemas` and are referenced from there.
 */
function responseSchema(schema: z.ZodType, components: Record<string, unknown>): unknown {
  const {
    $schema: _ignored,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as {
    $schema?: string;
    $defs?: Record<string, unknown>;
  };
  const relink = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/'));
  for (const [name, def] of Object.entries($defs ?? {})) components[name] = relink(def);
  return relink(rest);
}

function openApiResponse(response: RouteResponse, components: Record<string, unknown>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (response.json !== undefined) {
    content["application/json"] = { schema: responseSchema(response.json, components) };
  }
  if (response.bytes !== undefined) content[response.bytes] = { schema: { type: "string", format: "binary" } };
  const headers = Object.fromEntries((response.headers ?? []).map((h) => [h, { schema: { type: "string" } }]));
  return {
    description: response.description,
    ...(response.headers === undefined ? {} : { headers }),
    ...(Object.keys(content).length === 0 ? {} : { content }),
  };
}

function inputSchema(operation: OperationLookup, route: RestRoute): JsonSchema {
  const op = operation(route.op);
  if (op === undefined) return {};
  const schema = z.toJSONSchema(op.input, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const { $schema: _ignored, ...rest } = schema;
  const fromPath = new Set(Object.keys(route.pathInput ?? {}));
  const properties = Object.fromEntries(Object.entries(rest.properties ?? {}).filter(([k]) => !fromPath.has(k)));
  const required = (rest.required ?? []).filter((k) => !fromPath.has(k));
  return { ...rest, properties, required };
}

/**
 * The OpenAPI 3.1 document, generated from the route table, the operations' input schemas and
 * the routes' response schemas. `serverUrl` is the public base URL the document names.
 */
export function buildOpenApi(
  lookup: OperationLookup,
  routes: readonly RestRoute[],
  version: string,
  serverUrl: string,
) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = { Error: ERROR_SCHEMA };
  const seen = new Map<string, number>();
  for (const route of routes) {
    // Aliases (`/exec` for `/query`) and HEAD twins share an operation: keep ids unique.
    const count = (seen.get(route.op) ?? 0) + 1;
    seen.set(route.op, count);
    const path = openApiPath(route);
    const schema = inputSchema(lookup, route);
    const parameters: unknown[] = pathParams(route).map((name) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const operation: Record<string, unknown> = {
      operationId: count === 1 ? route.op : `${route.op}.${count}`,
      summary: route.summary,
      ...(route.description === undefined ? {} : { description: route.description }),
      tags: [route.tag],
      parameters,
      responses: {
        ...Object.fromEntries(
          Object.entries(routeResponses(route)).map(([status, r]) => [status, openApiResponse(r, schemas)]),
        ),
        default: ERROR_REF,
      },
    };
    if (route.from === "query" || route.query !== undefined) {
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
        if (route.from !== "query" && !route.query?.includes(name)) continue;
        parameters.push({ name, in: "query", required: (schema.required ?? []).includes(name), schema: prop });
      }
    } else if (route.from === "body") {
      operation.requestBody = { required: true, content: { "application/json": { schema } } };
    }
    if (route.rawBody) {
      operation.requestBody = { required: true, content: { "*/*": { schema: { type: "string", format: "binary" } } } };
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Prim REST API", version, description: API_LIMITS },
    servers: [{ url: serverUrl }],
    components: {
      schemas,
      responses: {
        Error: {
          description: "Error: `{ error: { code, message } }` (spec, Errors)",
          headers: { "X-Request-Id": { schema: { type: "string" } } },
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
      },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
    security: [{ bearer: [] }, {}],
    paths,
  };
}
