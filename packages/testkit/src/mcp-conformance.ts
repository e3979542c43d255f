// The official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) as a
// function: runs the installed binary (a devDependency, never the network) against a URL, every
// server scenario (`--suite all`: the active ones and the two the suite still marks pending), and
// checks that every scenario of what the endpoint serves passes and the rest fail only for what
// it deliberately does not serve. PRIM_CONFORMANCE_BIN may point at another copy of the CLI. Used
// for the local endpoint (packages/mcp conformance.test.ts) and the cloud's (apps/mcp).
//
// The CLI runs on the Node running the tests (`process.execPath`): Node 26 from node_modules under
// the root `npm test`, 22.14 in CI's second pass. It declares no `engines`, but imports
// `globSync` from `node:fs` (Node >= 22; on 20 it fails to load) and its undici wants >= 20.18.1.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

const LINK = fileURLToPath(new URL("../../../node_modules/.bin/conformance", import.meta.url));
const BIN = process.env.PRIM_CONFORMANCE_BIN ?? LINK;
export const CONFORMANCE_INSTALLED = existsSync(BIN);

/** The CLI version whose scenarios `EXPECTED` lists (checked before a run: a newer CLI needs it checked again). */
export const CONFORMANCE_VERSION = "0.1.16";

/** The scenario passes: no FAILURE or WARNING check, at least one SUCCESS. */
export const PASS = "pass";
/**
 * The scenario finds nothing to check: every check is INFO (`server-sse-polling` when the call
 * is answered with plain JSON, which the spec allows: its SSE checks do not apply).
 */
export const NOT_APPLICABLE = "not applicable";

/** A JSON-RPC "Method not found": the capability is not declared, so the SDK has no handler. */
const NO_METHOD = /^Failed: MCP error -32601: Method not found$/;
/** A fixture tool of the suite's reference server that Prim has no tool for (-32602). */
/** A fixture resource of the suite's reference server: Prim's resources are `prim://` URIs (-32002). */
const noResource = (uri: string) =>
  new RegExp(`^Failed: MCP error -32002: not_found: resource '${uri.replace(/[/.]/g, "\\$&")}' not found$`);
const noTool = (name: string) => new RegExp(`^Failed: MCP error -32602: MCP error -32602: Tool ${name} not found$`);

/**
 * Every server scenario of the CLI, in its order: `PASS`, or what every FAILURE check (or, for a
 * scenario with warnings only, every WARNING check: the CLI counts those as failures too) must
 * say — each for something the endpoint deliberately does not serve. Most fixtures are tools of
 * the suite's reference server (`test_simple_text`, ...); the others need capabilities we do not
 * declare (logging, completions, prompts) or SSE resumability. To reclassify a scenario, change
 * its entry (the README's "Conformance" table follows, checked by packages/mcp's test).
 */
export const EXPECTED: Record<string, typeof PASS | typeof NOT_APPLICABLE | RegExp> = {
  "server-initialize": PASS,
  "logging-set-level": NO_METHOD, // no logging capability
  ping: PASS,
  "completion-complete": NO_METHOD, // no completions (it asks for prompt `test_prompt_with_arguments`)
  "tools-list": PASS,
  "tools-call-simple-text": noTool("test_simple_text"),
  "tools-call-image": noTool("test_image_content"),
  "tools-call-audio": noTool("test_audio_content"),
  "tools-call-embedded-resource": noTool("test_embedded_resource"),
  "tools-call-mixed-content": noTool("test_multiple_content_types"),
  "tools-call-with-logging": NO_METHOD, // logging/setLevel first: no logging capability
  "tools-call-error": noTool("test_error_handling"),
  "tools-call-with-progress": noTool("test_tool_with_progress"),
  "tools-call-sampling": noTool("test_sampling"), // and no sampling requests to the client
  "tools-call-elicitation": noTool("test_elicitation"), // a form-mode fixture
  // Pending in the suite: a fixture tool whose input schema carries $schema, $defs, additionalProperties.
  "json-schema-2020-12": /^Tool 'json_schema_2020_12_tool' not found\. Available tools: /,
  "elicitation-sep1034-defaults": noTool("test_elicitation_sep1034_defaults"), // form mode, defaults
  // Pending in the suite (SEP-1699): a `tools/call` that needs no stream (its fixture
  // `test_reconnection` is not served) is answered with JSON, so the POST-stream checks do not apply.
  "server-sse-polling": NOT_APPLICABLE,
  "server-sse-multiple-streams": PASS,
  "elicitation-sep1330-enums": noTool("test_elicitation_sep1330_enums"), // form mode, enums
  "resources-list": PASS,
  "resources-read-text": noResource("test://static-text"), // fixture
  "resources-read-binary": noResource("test://static-binary"), // fixture
  "resources-templates-read": noResource("test://template/123/data"), // fixture template test://template/{id}/data
  "resources-subscribe": noResource("test://watched-resource"), // subscribes to a fixture
  "resources-unsubscribe": noResource("test://watched-resource"), // subscribes to a fixture, then unsubscribes
  "prompts-list": NO_METHOD, // no prompts capability
  "prompts-get-simple": NO_METHOD,
  "prompts-get-with-args": NO_METHOD,
  "prompts-get-embedded-resource": NO_METHOD,
  "prompts-get-with-image": NO_METHOD,
  "dns-rebinding-protection": PASS,
};

/** Scenarios of features the endpoint serves: every check must pass. */
export const SERVED = Object.keys(EXPECTED).filter((name) => EXPECTED[name] === PASS);

/** Scenarios that need what the endpoint deliberately does not serve, with the reason. */
export const NOT_SERVED: Record<string, RegExp> = Object.fromEntries(
  Object.entries(EXPECTED).flatMap(([name, e]) => (e instanceof RegExp ? [[name, e]] : [])),
);

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

/** What the CLI holds against a scenario: its FAILURE checks, else its WARNING checks. */
function problems(checks: Check[]): Check[] {
  const failures = checks.filter((c) => c.status === "FAILURE");
  return failures.length > 0 ? failures : checks.filter((c) => c.status === "WARNING");
}

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [realpathSync(BIN), ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    output += c.toString();
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

/** checks.json of every scenario in the output directory, by scenario name. */
function results(outDir: string): Map<string, Check[]> {
  const out = new Map<string, Check[]>();
  for (const entry of readdirSync(outDir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(entry)?.[1];
    if (scenario === undefined) continue;
    out.set(scenario, JSON.parse(readFileSync(join(outDir, entry, "checks.json"), "utf8")) as Check[]);
  }
  return out;
}

/**
 * Runs every server scenario against `url`; `notServed` (scenario → reason) must fail, every
 * FAILURE (or, warnings only, every WARNING) with that reason, and everything else must pass.
 * The report of each scenario (pass, or its first problem) is in every assertion's message.
 */
export async function expectConformance(url: string, notServed: Record<string, RegExp> = NOT_SERVED): Promise<void> {
  expect((await run(["--version"])).output.trim(), "EXPECTED lists another version's scenarios").toBe(
    CONFORMANCE_VERSION,
  );
  const served = Object.keys(EXPECTED).filter((name) => !(name in notServed));
  const dir = mkdtempSync(join(tmpdir(), "prim-conformance-"));
  try {
    const outDir = join(dir, "results");
    // The baseline makes the CLI itself exit 1 on an unexpected failure or a stale entry.
    const baseline = join(dir, "baseline.yml");
    writeFileSync(
      baseline,
      `server:\n${Object.keys(notServed)
        .map((n) => `  - ${n}\n`)
        .join("")}`,
    );
    const args = ["server", "--url", url, "--suite", "all", "--expected-failures", baseline, "-o", outDir];
    const { code, output } = await run(args);
    const byScenario = results(outDir);
    const report = [...byScenario]
      .map(([name, checks]) => {
        const first = problems(checks)[0];
        return first === undefined ? `pass ${name}` : `${first.status} ${name}: ${first.errorMessage}`;
      })
      .join("\n");
    expect([...byScenario.keys()].sort(), report).toEqual([...served, ...Object.keys(notServed)].sort());
    for (const name of served) {
      const checks = byScenario.get(name) ?? [];
      expect(problems(checks), `${name}\n${report}`).toEqual([]);
      if (EXPECTED[name] === NOT_APPLICABLE) {
        expect(checks.length > 0 && checks.every((c) => c.status === "INFO"), `${name}\n${report}`).toBe(true);
      } else {
        expect(
          checks.some((c) => c.status === "SUCCESS"),
          name,
        ).toBe(true);
      }
    }
    for (const [name, reason] of Object.entries(notServed)) {
      const held = problems(byScenario.get(name) ?? []);
      expect(held.length, `${name} was expected to fail\n${report}`).toBeGreaterThan(0);
      for (const c of held) expect(c.errorMessage ?? "", `${name}\n${report}`).toMatch(reason);
    }
    expect(code, `${report}\n${output.slice(-2000)}`).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Forwards every request to `to.target`, with `Authorization: Bearer <to.key>` added, streaming
 * both ways (SSE included): the conformance CLI sends no credentials of its own. `to` may be
 * filled in after the proxy listens (its origin is the MCP app's allowed origin).
 */
export function authProxy(to: { target?: URL; key?: string }): Server {
  return createServer((req, res) => {
    const { target, key } = to as { target: URL; key: string };
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${key}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
    res.on("close", () => upstream.destroy());
  });
}
