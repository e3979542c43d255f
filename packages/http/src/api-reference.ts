import { ERROR_STATUS, OPERATIONS } from "@prim/engine";
import { buildOpenApi } from "./openapi.js";
import { REST_ROUTES } from "./routes/index.js";
import { VERSION } from "./version.js";

/**
 * The API reference (docs/api.md) rendered from the OpenAPI document: every route with its
 * parameters, request body fields and answers, the named shapes, and the error codes.
 * `npm run docs` writes it (scripts/api-docs.mjs); test/api-reference.test.ts fails when the
 * file differs from what this renders.
 */

type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  description?: string;
  default?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
};
type Parameter = { name: string; in: string; required: boolean; schema: Schema };
type Content = Record<string, { schema: Schema }>;
type Response = { $ref?: string; description?: string; headers?: Record<string, unknown>; content?: Content };
type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters: Parameter[];
  requestBody?: { content: Content };
  responses: Record<string, Response>;
};
export type OpenApiDocument = {
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

/** The document `prim dev` serves at /v1/openapi.json (its server URL as on the default port). */
export function localOpenApi(): OpenApiDocument {
  const ops = new Map(OPERATIONS.map((op) => [op.name, op]));
  return buildOpenApi((name) => ops.get(name), REST_ROUTES, VERSION, "http://localhost:7777") as OpenApiDocument;
}

const REF = "#/components/schemas/";
/** zod's bounds of a safe integer say nothing a reader needs. */
const SAFE = Number.MAX_SAFE_INTEGER;

const cell = (text: string) => text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");
const code = (value: unknown) => `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
const anchor = (name: string) => name.toLowerCase();
const isObject = (s: Schema) => s.type === "object" || s.properties !== undefined;

/** A schema as a short type: `string or null`, `array of [KvEntry](#kventry)`, `{ bearer: string }`. */
function typeOf(s: Schema, depth = 0): string {
  if (s.$ref !== undefined) {
    const name = s.$ref.slice(REF.length);
    return `[${name}](#${anchor(name)})`;
  }
  const union = s.anyOf ?? s.oneOf;
  if (union !== undefined) return union.map((u) => typeOf(u, depth)).join(" or ");
  if (s.enum !== undefined) return s.enum.map(code).join(" or ");
  if (Array.isArray(s.type)) return s.type.join(" or ");
  if (s.type === "array") return `array of ${s.items === undefined ? "any JSON" : inner(s.items, depth)}`;
  if (s.type === "string" && s.format === "binary") return "bytes";
  if (isObject(s)) {
    const props = Object.entries(s.properties ?? {});
    if (props.length > 0 && depth < 2) {
      const required = new Set(s.required ?? []);
      const fields = props.map(([k, v]) => `${k}${required.has(k) ? "" : "?"}: ${typeOf(v, depth + 1)}`);
      return `{ ${fields.join(", ")} }`;
    }
    if (typeof s.additionalProperties === "object") return `object of ${inner(s.additionalProperties, depth)}`;
    return "object";
  }
  return s.type ?? "any JSON";
}

/** The element type of an array or map: a union in parentheses. */
function inner(s: Schema, depth: number): string {
  const type = typeOf(s, depth);
  return type.includes(" or ") && !type.startsWith("{") ? `(${type})` : type;
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** Constraints and defaults worth stating next to a field. */
function notes(s: Schema): string {
  const out: string[] = [];
  if (s.description !== undefined) out.push(s.description);
  if (s.default !== undefined) out.push(`default ${code(s.default)}`);
  if (s.minimum !== undefined && s.minimum > -SAFE) out.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined && s.maximum < SAFE) out.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined) out.push(`at least ${count(s.minLength, "character")}`);
  if (s.maxLength !== undefined) out.push(`at most ${count(s.maxLength, "character")}`);
  if (s.minItems !== undefined) out.push(`at least ${count(s.minItems, "item")}`);
  if (s.maxItems !== undefined) out.push(`at most ${count(s.maxItems, "item")}`);
  if (s.pattern !== undefined) out.push(`matches ${code(s.pattern)}`);
  if (s.format !== undefined && s.format !== "binary") out.push(`format ${s.format}`);
  return out.join("; ");
}

/** Table rows for an object's fields, nested objects and arrays of objects as `a.b` / `a[].b`. */
function fieldRows(s: Schema, prefix = ""): string[] {
  const required = new Set(s.required ?? []);
  const rows: string[] = [];
  for (const [name, field] of Object.entries(s.properties ?? {})) {
    const path = `${prefix}${name}`;
    const nested = field.type === "array" && field.items !== undefined && isObject(field.items) ? field.items : field;
    const expands = isObject(nested) && Object.keys(nested.properties ?? {}).length > 0 && nested.$ref === undefined;
    const type = expands ? (nested === field ? "object" : "array of objects") : typeOf(field);
    rows.push(`| \`${path}\` | ${cell(type)} | ${required.has(name) ? "yes" : "no"} | ${cell(notes(field))} |`);
    if (expands) rows.push(...fieldRows(nested, nested === field ? `${path}.` : `${path}[].`));
  }
  return rows;
}

function fieldTable(s: Schema): string[] {
  return ["| field | type | required | notes |", "| --- | --- | --- | --- |", ...fieldRows(s)];
}

function parameterTable(params: Parameter[]): string[] {
  return [
    "| parameter | in | type | required | notes |",
    "| --- | --- | --- | --- | --- |",
    ...params.map(
      (p) =>
        `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? "yes" : "no"} | ${cell(notes(p.schema))} |`,
    ),
  ];
}

function requestBody(op: Operation): string[] {
  if (op.requestBody === undefined) return [];
  const json = op.requestBody.content["application/json"];
  if (json === undefined) {
    const types = Object.keys(op.requestBody.content).map(code).join(", ");
    return ["", `Request body: the raw bytes (${types}), streamed.`];
  }
  if (Object.keys(json.schema.properties ?? {}).length === 0) return ["", "Request body: a JSON object (`{}`)."];
  return ["", "Request body (JSON):", "", ...fieldTable(json.schema)];
}

function responseBody(r: Response): string {
  const parts = Object.entries(r.content ?? {}).map(([type, { schema }]) =>
    type === "application/json" ? `JSON ${typeOf(schema)}` : `${code(type)} bytes`,
  );
  return parts.length === 0 ? "none" : parts.join("; or ");
}

function responseTable(op: Operation): string[] {
  const rows = Object.entries(op.responses).map(([status, r]) => {
    if (status === "default") return "| 4xx, 5xx | an error: [Errors](#errors) | JSON [Error](#error) |";
    const headers = Object.keys(r.headers ?? {});
    const meaning = `${r.description ?? ""}${headers.length === 0 ? "" : ` (headers: ${headers.join(", ")})`}`;
    return `| ${status} | ${cell(meaning)} | ${cell(responseBody(r))} |`;
  });
  return ["", "| status | answer | body |", "| --- | --- | --- |", ...rows];
}

function renderRoute(method: string, path: string, op: Operation): string[] {
  const out = [`### ${method.toUpperCase()} \`${path}\``, "", `${op.summary}. Operation \`${op.operationId}\`.`];
  if (op.description !== undefined) out.push("", op.description);
  if (op.parameters.length > 0) out.push("", ...parameterTable(op.parameters));
  out.push(...requestBody(op), ...responseTable(op), "");
  return out;
}

function renderSchema(name: string, s: Schema): string[] {
  const out = [`### ${name}`, ""];
  if (s.description !== undefined) out.push(s.description, "");
  if (Object.keys(s.properties ?? {}).length > 0) out.push(...fieldTable(s));
  else out.push(`${typeOf(s)}.`);
  out.push("");
  return out;
}

/** The Markdown of docs/api.md for a document; `errors` gives each error code's status. */
export function renderApiReference(doc: OpenApiDocument, errors: Record<string, number> = ERROR_STATUS): string {
  const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const tags = [...new Set(routes.map((r) => r.op.tags[0] ?? "other"))];
  const out = [
    "# API reference",
    "",
    "<!-- Generated from the OpenAPI document by `npm run docs` (packages/http/src/api-reference.ts); do not edit. -->",
    "",
    `${doc.info.title} ${doc.info.version}: every route of \`/v1\`, from the OpenAPI 3.1 document the engine`,
    "serves at `GET /v1/openapi.json` (built from the route table and the operations' schemas, so this page",
    `and the running server agree). Locally the base URL is \`${doc.servers[0]?.url ?? ""}\`; in the cloud it is`,
    "the api's `PRIM_PUBLIC_API_URL` ([cloud.md](cloud.md)).",
    "",
    "Every route takes `Authorization: Bearer <credential>` (an API key in the cloud; the root token of a",
    "`prim dev` started with one), except `/v1/signed/…`, whose path token is the credential; `prim dev`",
    "without a root token serves localhost without one. Which credential may call what: [spec.md](spec.md),",
    "Authentication.",
    "",
    doc.info.description,
    "",
    "## Routes",
    "",
    ...tags.map(
      (tag) =>
        `- [${tag}](#${anchor(tag)}): ${routes
          .filter((r) => (r.op.tags[0] ?? "other") === tag)
          .map((r) => `${r.method.toUpperCase()} \`${r.path.replace(/^\/v1/, "")}\``)
          .join(", ")}`,
    ),
    "",
  ];
  for (const tag of tags) {
    out.push(`## ${tag}`, "");
    for (const r of routes) if ((r.op.tags[0] ?? "other") === tag) out.push(...renderRoute(r.method, r.path, r.op));
  }
  out.push("## Shapes", "", "The named shapes the answers above refer to.", "");
  for (const [name, schema] of Object.entries(doc.components.schemas)) out.push(...renderSchema(name, schema));
  out.push(
    "## Errors",
    "",
    'Every error answers `{ "error": { "code", "message" } }` with one of these codes, under its status here;',
    "in the cloud `plan_limit` also answers 429 at a Starter cap (operations, storage, primitives). What each",
    "code means: [spec.md](spec.md), Errors.",
    "",
    "| status | code |",
    "| --- | --- |",
    ...Object.entries(errors)
      .sort(([a, x], [b, y]) => x - y || a.localeCompare(b))
      .map(([c, status]) => `| ${status} | \`${c}\` |`),
    "",
  );
  return out.join("\n");
}
