// The official MCP conformance suite's server scenarios against the local endpoint
// (`@prim/testkit/mcp`); without the CLI installed the run is skipped. The README's
// "Conformance" table must say what `EXPECTED` says.

import { readFileSync } from "node:fs";
import {
  CONFORMANCE_INSTALLED,
  CONFORMANCE_VERSION,
  EXPECTED,
  expectConformance,
  NOT_APPLICABLE,
  PASS,
} from "@prim/testkit/mcp";
import { describe, expect, it } from "vitest";
import { startMcpServer } from "./helpers.js";

const title = CONFORMANCE_INSTALLED
  ? "passes every scenario of what it serves; the rest fail only for what it does not serve"
  : `SKIPPED: @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} is not installed (add it to the root devDependencies)`;

describe("MCP conformance (server scenarios)", () => {
  it.skipIf(!CONFORMANCE_INSTALLED)(title, { timeout: 180_000 }, async () => {
    const s = await startMcpServer();
    await expectConformance(`${s.url}/mcp/conformance`);
  });

  it("the README's table lists every scenario, in the CLI's order, as EXPECTED classifies it", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("\n## Conformance\n"), readme.indexOf("\n## Tests\n"));
    expect(section).toContain(`\`@modelcontextprotocol/conformance\` ${CONFORMANCE_VERSION}`);
    const rows = [...section.matchAll(/^\| `([a-z0-9-]+)` \| ([a-z ]+) \| ([a-z ]+) \|/gm)].map((m) => m.slice(1, 4));
    // The cloud's test (apps/mcp) uses the same table.
    const expected = Object.entries(EXPECTED).map(([name, e]) => [
      name,
      ...Array(2).fill(e === PASS ? "pass" : e === NOT_APPLICABLE ? "not applicable" : "not served"),
    ]);
    expect(rows).toEqual(expected);
  });
});
