// The wire shapes as zod schemas (`@prim/wire/schemas`): what each operation answers, checked
// against the wire types both ways when this package compiles. The one source of the REST
// routes' OpenAPI response bodies (@prim/http) and the MCP tools' output schemas (@prim/mcp).
// A subpath of its own because it needs zod; the main entry has no runtime dependencies.

export * from "./keys.js";
export { resultSchema } from "./results.js";
export * from "./shapes.js";
