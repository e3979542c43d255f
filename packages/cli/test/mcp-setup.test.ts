// `prim mcp`'s setup: the same tool-pattern parser as `/mcp/<group>?tools=` (packages/mcp
// `parseToolPatterns`), so a pattern the HTTP endpoint refuses is refused here too, before any
// engine is opened.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { primCommand } from "@prim/testkit";
import { afterEach, describe, expect, it } from "vitest";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("prim mcp setup", () => {
  it("refuses --tools patterns outside a-z, _ and * with the endpoint's message, opening nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-mcp-setup-"));
    dirs.push(dir);
    const data = join(dir, "data");
    const child = spawn(
      process.execPath,
      [...primCommand(), "mcp", "--group", "g", "--data", data, "--tools", "kv_*,DROP"],
      {
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("tools: comma-separated tool names or patterns like kv_*");
    expect(existsSync(data)).toBe(false);
  });
});
