// The official MCP conformance suite's server scenarios against the local endpoint
// (`@prim/testkit/mcp`); without the CLI installed the test is skipped.

import { CONFORMANCE_INSTALLED, expectConformance } from "@prim/testkit/mcp";
import { describe, it } from "vitest";
import { startMcpServer } from "./helpers.js";

const title = CONFORMANCE_INSTALLED
  ? "passes every scenario of what it serves; the rest fail only for what it does not serve"
  : "SKIPPED: @modelcontextprotocol/conformance@0.1.13 is not installed (add it to the root devDependencies)";

describe("MCP conformance (server scenarios)", () => {
  it.skipIf(!CONFORMANCE_INSTALLED)(title, { timeout: 180_000 }, async () => {
    const s = await startMcpServer();
    await expectConformance(`${s.url}/mcp/conformance`);
  });
});
