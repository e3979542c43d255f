// The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.13, server
// scenarios) as a function: runs the installed binary (a devDependency, never the network)
// against a URL and checks that every scenario of what the endpoint serves passes and the rest
// fail only for what it deliberately does not serve. PRIM_CONFORMANCE_BIN may point at another
// copy of the CLI. Used for the local endpoint (packages/mcp conformance.test.ts) and the cloud's (apps/mcp).
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

/** Scenarios of features the endpoint serves: every check must pass. */
export const SERVED = [
  "server-initialize",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

/**
 * Scenarios that need what the endpoint deliberately does not serve, with the reason. Most need
 * the suite's fixture tools (`test_simple_text`, `test_error_handling`, ...) of its reference
 * server; the others need capabilities we do not declare (logging, completions, resources,
 * prompts, sampling, elicitation).
 */
export const NOT_SERVED: Record<string, RegExp> = {
  "logging-set-level": /Method not found/, // no logging capability
  "completion-complete": /Method not found/, // no completions (no prompts or resource templates)
  "tools-call-simple-text": /test_simple_text not found/,
  "tools-call-image": /test_image_content not found/,
  "tools-call-audio": /test_audio_content not found/,
  "tools-call-embedded-resource": /test_embedded_resource not found/,
  "tools-call-mixed-content": /test_multiple_content_types not found/,
  "tools-call-with-logging": /Method not found/, // logging/setLevel first: no logging capability
  "tools-call-error": /test_error_handling not found/,
  "tools-call-with-progress": /test_tool_with_progress not found/,
  "tools-call-sampling": /test_sampling not found/, // and no sampling requests to the client
  "tools-call-elicitation": /test_elicitation not found/, // and no elicitation
  "elicitation-sep1034-defaults": /test_elicitation_sep1034_defaults not found/,
  "elicitation-sep1330-enums": /test_elicitation_sep1330_enums not found/,
  "resources-list": /Method not found/, // no resources
  "resources-read-text": /Method not found/,
  "resources-read-binary": /Method not found/,
  "resources-templates-read": /Method not found/,
  "resources-subscribe": /Method not found/,
  "resources-unsubscribe": /Method not found/,
  "prompts-list": /Method not found/, // no prompts
  "prompts-get-simple": /Method not found/,
  "prompts-get-with-args": /Method not found/,
  "prompts-get-embedded-resource": /Method not found/,
  "prompts-get-with-image": /Method not found/,
};

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
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
 * Runs every server scenario against `url`; `notServed` (scenario → reason) must fail, with
 * that reason, and everything else must pass.
 */
export async function expectConformance(url: string, notServed: Record<string, RegExp> = NOT_SERVED): Promise<void> {
  // The scenario lists are those of 0.1.13, pinned when newer versions needed a newer Node than
  // Prim supported (Node 20). Node >= 22.14 no longer holds it back: a newer CLI needs these lists
  // checked again.
  expect((await run(["--version"])).output.trim()).toBe("0.1.13");
  const served = [...SERVED, ...Object.keys(NOT_SERVED)].filter((name) => !(name in notServed));
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
    const { code, output } = await run(["server", "--url", url, "--expected-failures", baseline, "-o", outDir]);
    const byScenario = results(outDir);
    const report = [...byScenario]
      .map(([name, checks]) => {
        const failed = checks.filter((c) => c.status === "FAILURE");
        return `${failed.length === 0 ? "pass" : "FAIL"} ${name}${failed.length === 0 ? "" : `: ${failed[0]?.errorMessage}`}`;
      })
      .join("\n");
    expect([...byScenario.keys()].sort(), report).toEqual([...served, ...Object.keys(notServed)].sort());
    for (const name of served) {
      const checks = byScenario.get(name) ?? [];
      expect(checks.length, name).toBeGreaterThan(0);
      expect(
        checks.filter((c) => c.status === "FAILURE"),
        name,
      ).toEqual([]);
      expect(
        checks.some((c) => c.status === "SUCCESS"),
        name,
      ).toBe(true);
    }
    for (const [name, reason] of Object.entries(notServed)) {
      const failures = (byScenario.get(name) ?? []).filter((c) => c.status === "FAILURE");
      expect(failures.length, `${name} was expected to fail`).toBeGreaterThan(0);
      expect(failures[0]?.errorMessage ?? "", name).toMatch(reason);
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
