// `prim key attenuate`: offline (no API is reachable at --api), the key from PRIM_API_KEY or the
// flag, the caveats from the flags in a fixed order — the same token the SDK's `attenuate` makes.
import { attenuate } from "@prim/sdk";
import { runPrimCommand } from "@prim/testkit";
import { describe, expect, it } from "vitest";
import { caveatsOf, parseDuration } from "../src/key-attenuate.js";

const KEY = `pk_${"2".repeat(32)}`;
const env = (extra: Record<string, string> = {}) => ({
  ...process.env,
  PRIM_CONFIG_DIR: "/nonexistent/prim",
  ...extra,
});
const NOWHERE = "http://127.0.0.1:9"; // nothing listens: the command must not call it

describe("prim key attenuate", () => {
  it("prints the token the SDK makes for the same caveats, without any request", async () => {
    const run = await runPrimCommand(
      [
        "key",
        "attenuate",
        "--api",
        NOWHERE,
        "--group",
        "app",
        "--tools",
        "kv_get",
        "--tools",
        "kv_list",
        "--read-only",
        "--ip",
        "10.0.0.0/8",
      ],
      env({ PRIM_API_KEY: KEY }),
    );
    expect(run.code).toBe(0);
    const expected = await attenuate(KEY, [
      { type: "group", group: "app" },
      { type: "tools", tools: ["kv_get", "kv_list"] },
      { type: "read_only" },
      { type: "ip", cidrs: ["10.0.0.0/8"] },
    ]);
    expect(run.stdout.trim()).toBe(expected);
  });

  it("--json names the caveats, an expiry among them; a pa_ token narrows further", async () => {
    const first = await runPrimCommand(["key", "attenuate", "--key", KEY, "--group", "app", "--json"], env());
    const { token } = JSON.parse(first.stdout) as { token: string };
    const before = Date.now();
    const run = await runPrimCommand(["key", "attenuate", "--key", token, "--expires-in", "1h", "--json"], env());
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { token: string; caveats: { type: string; at: number }[] };
    const at = out.caveats[0]?.at as number;
    expect(at).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(out.token).toBe(
      await attenuate(KEY, [
        { type: "group", group: "app" },
        { type: "expires", at },
      ]),
    );
  });

  it("refuses no caveats, a bad duration and no key, exiting non-zero", async () => {
    expect((await runPrimCommand(["key", "attenuate"], env({ PRIM_API_KEY: KEY }))).code).not.toBe(0);
    const bad = await runPrimCommand(["key", "attenuate", "--expires-in", "soon"], env({ PRIM_API_KEY: KEY }));
    expect(bad.stderr).toContain("--expires-in");
    const none = await runPrimCommand(["key", "attenuate", "--read-only", "--api", NOWHERE], env());
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain("not logged in");
  });

  it("reads durations and flags", () => {
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("7d")).toBe(604_800_000);
    expect(caveatsOf({ tools: ["kv_get,fs_*", " db_query "] }, 0)).toEqual([
      { type: "tools", tools: ["kv_get", "fs_*", "db_query"] },
    ]);
  });
});
