// `npm run docs`: writes docs/api.md, the API reference rendered from the OpenAPI document
// (packages/http/src/api-reference.ts), from the TypeScript sources — no build needed.
// Run as `node --import tsx --import ./scripts/register-source-hooks.mjs scripts/api-docs.mjs`
// (the root package.json's `docs` script). packages/http/test/api-reference.test.ts fails
// when docs/api.md differs from what this writes.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { localOpenApi, renderApiReference } from "@prim/http";

const file = fileURLToPath(new URL("../docs/api.md", import.meta.url));
const text = renderApiReference(localOpenApi());
let before = "";
try {
  before = readFileSync(file, "utf8");
} catch {}
if (before === text) {
  console.log("docs/api.md is up to date");
} else {
  writeFileSync(file, text);
  console.log(`docs/api.md written (${text.split("\n").length} lines)`);
}
