import { buildOpenApi, type OperationLookup, openApiPath, REST_ROUTES } from "@prim/http";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { FastifyInstance } from "fastify";
import { expect } from "vitest";

/**
 * Response conformance: every JSON answer a test server sends is validated against the
 * OpenAPI document its `/v1/openapi.json` serves (built by the same function: the schema of its route and status, or the
 * one error schema for 4xx/5xx). Every suite that starts a server through server.ts is thereby
 * a test of the document; a violation fails the test that caused it (see `assertConformant`).
 */

type Doc = { paths: Record<string, Record<string, { responses: Record<string, any> }>>; components: any };

const violations: string[] = [];
let validators: Map<string, ValidateFunction> | undefined;
let errorValidator: ValidateFunction | undefined;

function compile(doc: Doc): void {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  // Response schemas refer to `#/components/...`: each is compiled inside a root that holds them.
  const withComponents = (schema: object) => ajv.compile({ ...schema, components: doc.components });
  validators = new Map();
  for (const route of REST_ROUTES) {
    const operation = doc.paths[openApiPath(route)]?.[route.method.toLowerCase()];
    if (operation === undefined) throw new Error(`openapi: no ${route.method} ${openApiPath(route)}`);
    for (const [status, response] of Object.entries(operation.responses)) {
      if (status === "default") continue;
      const schema = response.content?.["application/json"]?.schema;
      const key = `${route.method} ${route.url} ${status}`;
      validators.set(
        key,
        schema === undefined ? ((() => true) as unknown as ValidateFunction) : withComponents(schema),
      );
    }
  }
  errorValidator = withComponents({ $ref: "#/components/schemas/Error" });
}

/** Installs the check on a server (before it listens), given its operations. */
export function checkResponses(app: FastifyInstance, operation: OperationLookup): void {
  if (validators === undefined) compile(buildOpenApi(operation, REST_ROUTES, "test", "http://localhost") as Doc);
  app.addHook("onSend", async (req, reply, payload) => {
    const pattern = req.routeOptions.url;
    // CORS preflights are not REST routes (and not in the document).
    if (req.method === "OPTIONS" || pattern === undefined || !pattern.startsWith("/v1/")) return payload;
    if (pattern === "/v1/openapi.json") return payload;
    const status = reply.statusCode;
    const type = String(reply.getHeader("content-type") ?? "");
    const where = `${req.method} ${req.url} → ${status}`;
    if (status >= 400) {
      if (req.method !== "HEAD" && typeof payload === "string" && !errorValidator?.(JSON.parse(payload))) {
        violations.push(`${where}: error body ${payload.slice(0, 200)}`);
      }
      return payload;
    }
    const validate = validators?.get(`${req.method} ${pattern} ${status}`);
    if (validate === undefined) {
      violations.push(`${where}: status ${status} is not documented for ${pattern}`);
      return payload;
    }
    if (type.startsWith("application/json") && typeof payload === "string" && !validate(JSON.parse(payload))) {
      violations.push(`${where}: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${payload.slice(0, 300)}`);
    }
    return payload;
  });
}

/** Fails the current test if any answer it caused broke the document. */
export function assertConformant(): void {
  const found = violations.splice(0);
  expect(found, "responses that do not match /v1/openapi.json").toEqual([]);
}
