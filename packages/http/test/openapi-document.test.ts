import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, withKv } from "@prim/testkit/rest";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REST_ROUTES } from "../src/routes/index.js";

type Doc = {
  servers: { url: string }[];
  paths: Record<string, Record<string, { responses: Record<string, any>; parameters: { name: string }[] }>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, any> };
};

/** A program written against the generated types: it must type-check, and its `@ts-expect-error` lines must err. */
const PROGRAM = `
import type { components, paths } from "./schema.js";

type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { "application/json": infer T } } };
}
  ? T
  : never;

type KvEntry = Json<"/v1/primitives/{id}/keys/{key}", "get", 200>;
const entry: KvEntry = { key: "a", encoding: "json", version: 1, expires_at: null, created_at: 1, updated_at: 2, value: 1 };
export const version: number = entry.version;
// @ts-expect-error version is a number
export const wrongVersion: KvEntry = { ...entry, version: "1" };
// @ts-expect-error encoding is json or bytes
export const wrongEncoding: KvEntry = { ...entry, encoding: "utf8" };

type Received = Json<"/v1/primitives/{id}/queues/{queue}/receive", "post", 200>;
export const token: string | undefined = ({} as Received).data[0]?.lease_token;

type Sent = Json<"/v1/primitives/{id}/queues/{queue}/messages", "post", 201>;
export const deduplicated: boolean = ({} as Sent).deduplicated;

type Query = Json<"/v1/primitives/{id}/query", "post", 200>;
export const rows: Record<string, unknown>[] = ({} as Query).rows;

type Recall = Json<"/v1/primitives/{id}/recall", "post", 200>;
export const score: number | undefined = ({} as Recall).data[0]?.score;

type Info = components["schemas"]["PrimitiveInfo"];
export const paused: boolean = ({} as Info).paused;
// @ts-expect-error type is one of the seven primitive types
export const wrongType: Info["type"] = "table";

type ErrorCode = components["schemas"]["Error"]["error"]["code"];
export const code: ErrorCode = "not_found";
// @ts-expect-error not one of the spec's error codes
export const wrongCode: ErrorCode = "nope";
`;

function typeCheck(dir: string): string[] {
  const program = ts.createProgram([join(dir, "program.ts")], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    skipLibCheck: false,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}

describe("the OpenAPI document", () => {
  // Runs the TypeScript compiler over the generated client: seconds of CPU, more under a parallel run.
  it("generates a typed client (openapi-typescript) that a program type-checks against", {
    timeout: 90_000,
  }, async () => {
    const { api } = await startServer();
    const doc = (await api("GET", "/v1/openapi.json")).body;
    const dir = mkdtempSync(join(tmpdir(), "prim-openapi-"));
    try {
      writeFileSync(join(dir, "schema.ts"), astToString(await openapiTS(doc)));
      writeFileSync(join(dir, "program.ts"), PROGRAM);
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
      expect(typeCheck(dir)).toEqual([]);
      // The same program with a wrong field fails: the check above is not vacuous.
      writeFileSync(join(dir, "program.ts"), `${PROGRAM}\nexport const missing: number = entry.size;\n`);
      expect(typeCheck(dir).join("\n")).toMatch(/Property 'size' does not exist/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives every route a documented success answer and points every error at one schema", async () => {
    const { api } = await startServer();
    const doc: Doc = (await api("GET", "/v1/openapi.json")).body;
    let operations = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        operations++;
        const where = `${method.toUpperCase()} ${path}`;
        expect(operation.responses.default, where).toEqual({ $ref: "#/components/responses/Error" });
        const success = Object.entries(operation.responses).filter(([status]) => /^2/.test(status));
        expect(success.length, where).toBeGreaterThan(0);
        for (const [status, response] of success) {
          if (status === "204" || method === "head") continue;
          const content = response.content ?? {};
          expect(Object.keys(content).length, `${where} ${status} has a body schema`).toBeGreaterThan(0);
          const json = content["application/json"]?.schema;
          if (json !== undefined) expect(JSON.stringify(json), where).not.toBe("{}");
        }
      }
    }
    expect(operations).toBe(REST_ROUTES.length);
    // Routes that build their input themselves still document the query parameters they read.
    const names = (path: string) => doc.paths[path]?.get?.parameters.map((p: { name: string }) => p.name);
    expect(names("/v1/primitives/{id}/files/{path}")).toEqual(["id", "path", "list", "recursive", "stat"]);
    expect(names("/v1/primitives/{id}/objects/{key}")).toEqual(["id", "key", "stat"]);
    expect(doc.components.responses.Error.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Error",
    });
    for (const name of ["KvEntry", "Job", "Memory", "PrimitiveInfo", "GroupInfo", "ObjectInfo", "AuditEntry"]) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
  });

  it("documents each queue batch route's limits, per-entry answers and metering", async () => {
    const { api } = await startServer();
    const doc = (await api("GET", "/v1/openapi.json")).body as {
      paths: Record<string, { post: { description: string; responses: Record<string, any> } }>;
    };
    for (const path of [
      "/v1/primitives/{id}/queues/{queue}/messages/batch",
      "/v1/primitives/{id}/queues/{queue}/ack/batch",
      "/v1/primitives/{id}/topics/{topic}/publish/batch",
    ]) {
      const post = doc.paths[path]?.post;
      expect(post?.description, path).toContain("each entry counts as one operation");
      expect(post?.description, path).toContain("At most 100 entries");
      const schema = JSON.stringify(post?.responses["200"]?.content["application/json"].schema);
      expect(schema, path).toContain('"status"');
      expect(schema, path).toContain("payload_too_large");
    }
  });

  it("names the configured public URL as its server, else the origin it was fetched from", async () => {
    const configured = await startServer({ publicUrl: "https://api.prim.example/" });
    expect((await configured.api("GET", "/v1/openapi.json")).body.servers).toEqual([
      { url: "https://api.prim.example" },
    ]);
    const local = await startServer();
    expect((await local.api("GET", "/v1/openapi.json")).body.servers).toEqual([{ url: local.url }]);
  });

  it("makes presigned URLs from the public URL when one is configured", async () => {
    const { api } = await withKv({ publicUrl: "https://api.prim.example" });
    const created = await api("POST", "/v1/primitives", { name: "files", type: "storage", group: "app" });
    expect(created.status).toBe(201);
    const presigned = await api("POST", `/v1/primitives/${created.body.id}/presign`, { key: "a.txt" });
    expect(presigned.body.url).toMatch(/^https:\/\/api\.prim\.example\/v1\/signed\//);
  });
});
