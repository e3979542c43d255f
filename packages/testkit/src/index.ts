// @prim/testkit: what tests of more than one unit share, light enough for any test or bench to
// load (no vitest, no server). The REST harness is `@prim/testkit/rest`, the MCP conformance
// runner `@prim/testkit/mcp` (README).
export { manifestOf, tarEntries } from "./archive.js";
export { freshDatabase, PG_ROOT, withClient } from "./pg.js";
export { freePort } from "./ports.js";
export { BIN, FROM_SOURCES, primCommand, ROOT, type RunningPrim, runPrimCommand, startPrim } from "./processes.js";
