import { MAX_JSON_DEPTH, MAX_RESPONSE_BYTES_PER_CALL } from "@prim/engine";
import { z } from "zod";
import { JSON_BODY_LIMIT } from "./limits.js";
import type { OperationLookup, RestRoute } from "./route.js";

type JsonSchema = { properties?: Record<string, unknown>; required?: string[]; [k: string]: unknown };

const ERROR_RESPONSE = {
  description: "Error",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["code", "message"],
            properties: { code: { type: "string" }, message: { type: "string" } },
          },
        },
      },
    },
  },
};

/** Limits every route shares, stated once in the document's description. */
const API_LIMITS = [
  "Errors are `{ error: { code, message } }`; every response carries `X-Request-Id`.",
  `JSON request bodies: at most ${JSON_BODY_LIMIT / 1024 / 1024} MiB (413 payload_too_large), and arrays/objects nested at most ${MAX_JSON_DEPTH} levels deep, the body itself counting as one (400 invalid_request).`,
  `Multi-item answers carry at most about ${MAX_RESPONSE_BYTES_PER_CALL / 1024 / 1024} MiB: a page of a listing ends early and its next_cursor continues it; POST /mget answers the keys that fit with truncated: true; a receive leases fewer jobs than max; a recall returns fewer memories than limit.`,
].join("\n\n");

/** `/v1/primitives/:id/keys/*` → `/v1/primitives/{id}/keys/{key}`. */
function openApiPath(route: RestRoute): string {
  const wildcard = Object.entries(route.pathInput ?? {}).find(([, param]) => param === "*")?.[0] ?? "path";
  return route.url.replace(/:([A-Za-z_]+)/g, "{$1}").replace(/\*$/, `{${wildcard}}`);
}

function pathParams(route: RestRoute): string[] {
  const names = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);
  for (const [field, param] of Object.entries(route.pathInput ?? {})) if (param === "*") names.push(field);
  return names;
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

/** The OpenAPI 3.1 document, generated from the route table and the operations' schemas. */
export function buildOpenApi(lookup: OperationLookup, routes: readonly RestRoute[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
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
        [String(route.status ?? 200)]: { description: route.status === 204 ? "No content" : "Success" },
        default: ERROR_RESPONSE,
      },
    };
    if (route.from === "query") {
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
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
    servers: [{ url: "http://localhost:7777" }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }, {}],
    paths,
  };
}
