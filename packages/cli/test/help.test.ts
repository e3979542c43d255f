import { runPrimCommand } from "@prim/testkit";
import { describe, expect, it } from "vitest";
import { ADMIN_COMMANDS } from "../src/admin-usage.js";

/**
 * Every command and subcommand answers `--help` with its usage and connects nowhere: Postgres
 * and Redis point at a closed port, so a command that tried would fail (exit 1, an error on
 * stderr) instead of printing its usage.
 */
const CLOSED = {
  ...process.env,
  DATABASE_URL: "postgres://postgres@127.0.0.1:1/x",
  REDIS_URL: "redis://127.0.0.1:1",
  PRIM_API_URL: "http://127.0.0.1:1",
};

async function help(...args: string[]) {
  return runPrimCommand(args, CLOSED);
}

/** Runs `fn` over `items`, `width` at a time (each is a process start). */
async function inBatches<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

describe("--help", { timeout: 120_000 }, () => {
  it("prim admin <command> --help: that command's usage, for every admin command", async () => {
    expect(ADMIN_COMMANDS).toEqual(
      expect.arrayContaining(["workspace move", "cell list", "cell rebuild", "fsck", "stripe sync", "usage"]),
    );
    await inBatches(ADMIN_COMMANDS, 3, async (command) => {
      const res = await help("admin", ...command.split(" "), "--help");
      expect({ command, code: res.code, stderr: res.stderr }).toEqual({ command, code: 0, stderr: "" });
      expect(res.stdout.startsWith(`prim admin ${command} `)).toBe(true);
      // Only its own usage.
      expect(res.stdout.match(/^prim admin /gm)).toHaveLength(1);
    });
  });

  it("prim admin --help lists every command; a noun's --help its commands; -h works too", async () => {
    const all = await help("admin", "--help");
    expect(all.code).toBe(0);
    for (const command of ADMIN_COMMANDS) expect(all.stdout).toContain(`prim admin ${command} `);
    const cell = await help("admin", "cell", "-h");
    expect(cell.code).toBe(0);
    expect(cell.stdout.match(/^prim admin cell \w+/gm)).toEqual([
      "prim admin cell list",
      "prim admin cell open",
      "prim admin cell close",
      "prim admin cell rebuild",
    ]);
    // With other options around it: still the usage, still nothing connects.
    const move = await help("admin", "workspace", "move", "--workspace", "ws_x", "--to", "b", "--help");
    expect(move).toMatchObject({ code: 0, stderr: "" });
    expect(move.stdout).toContain("prim admin workspace move --workspace W --to CELL");
    // A typo is still refused, before anything connects.
    const typo = await help("admin", "cell", "lst", "--help");
    expect(typo.code).toBe(0); // the noun is known: its commands
    const unknown = await help("admin", "celll", "list");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown admin command 'celll list'");
  });

  it("prim <command> --help: the command's part of the usage", async () => {
    const commands = ["dev", "mcp", "migrate", "login", "logout", "whoami", "push", "pull"];
    await inBatches(commands, 3, async (command) => {
      const res = await help(command, "--help");
      expect({ command, code: res.code, stderr: res.stderr }).toEqual({ command, code: 0, stderr: "" });
      expect(res.stdout.startsWith(`Usage: prim ${command} [options]\n\n  ${command} `)).toBe(true);
    });
  });
});
