import { readFileSync } from "node:fs";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { localOpenApi, renderApiReference } from "../src/api-reference.js";
import { openApiPath } from "../src/openapi.js";
import { REST_ROUTES } from "../src/routes/index.js";

const DOCS_API = new URL("../../../docs/api.md", import.meta.url);

/** The section of one route in the rendered reference: from its heading to the next. */
function section(text: string, method: string, path: string): string {
  const heading = `### ${method} \`${path}\`\n`;
  const start = text.indexOf(heading);
  if (start === -1) return "";
  const end = text.indexOf("\n### ", start + heading.length);
  return text.slice(start, end === -1 ? undefined : end);
}

describe("the API reference (docs/api.md)", () => {
  it("is what `npm run docs` renders from the current OpenAPI document", () => {
    const rendered = renderApiReference(localOpenApi());
    const onDisk = readFileSync(DOCS_API, "utf8");
    // Not toEqual on 2,000 lines: one clear line saying what to run.
    if (onDisk !== rendered) {
      let at = 0;
      while (onDisk[at] === rendered[at]) at++;
      const line = onDisk.slice(0, at).split("\n").length;
      expect.fail(`docs/api.md is out of date (first difference on line ${line}): run \`npm run docs\` and commit it`);
    }
  });

  it("renders from the document the server serves", async () => {
    const { api, url } = await startServer();
    const served = (await api("GET", "/v1/openapi.json")).body;
    expect(served.servers).toEqual([{ url }]);
    expect({ ...served, servers: [] }).toEqual({ ...localOpenApi(), servers: [] });
  });

  it("has every route once, with its parameters, body fields and answers", () => {
    const doc = localOpenApi();
    const text = renderApiReference(doc);
    for (const route of REST_ROUTES) {
      const path = openApiPath(route);
      const where = `${route.method} ${path}`;
      expect(text.split(`### ${route.method} \`${path}\`\n`).length - 1, where).toBe(1);
      const body = section(text, route.method, path);
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      if (op === undefined) throw new Error(`${where}: not in the document`);
      expect(body, where).toContain(`Operation \`${op.operationId}\``);
      for (const p of op.parameters)
        expect(body, `${where} parameter ${p.name}`).toContain(`| \`${p.name}\` | ${p.in} |`);
      const json = op.requestBody?.content["application/json"]?.schema;
      for (const field of Object.keys(json?.properties ?? {})) {
        expect(body, `${where} body field ${field}`).toContain(`| \`${field}\` |`);
      }
      for (const status of Object.keys(op.responses)) {
        expect(body, `${where} answer ${status}`).toMatch(status === "default" ? /\| 4xx, 5xx \|/ : `| ${status} |`);
      }
    }
    // Nested fields are spelled out, and a shape the answers link to has its own section.
    expect(section(text, "POST", "/v1/primitives/{id}/grants")).toContain("| `allow.hosts` | array of string | yes |");
    expect(section(text, "POST", "/v1/primitives/{id}/batch")).toContain("| `statements[].sql` | string | yes |");
    expect(section(text, "GET", "/v1/primitives/{id}/keys/{key}")).toContain("JSON [KvEntry](#kventry)");
    expect(text).toContain("### KvEntry\n");
    expect(text).toMatch(/\| 404 \| `not_found` \|/);
  });
});
