import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freshDatabase } from "@prim/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { startApi } from "../src/index.js";

const db = freshDatabase("start");
const dir = mkdtempSync(join(tmpdir(), "prim-start-"));
afterAll(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: db.url,
  PRIM_DATA_DIR: join(dir, "data"),
  PRIM_API_PORT: "0",
  ...extra,
});

describe("starting the api (npm run cloud)", () => {
  it("migrates the database, checks Redis and serves", async () => {
    const lines: string[] = [];
    const { url, api } = await startApi(env(), (line) => lines.push(line));
    try {
      expect(lines.join("\n")).toMatch(/^prim cloud: applied \S+_init/);
      const health = await (await fetch(`${url}/health`)).json();
      expect(health).toMatchObject({ ok: true });
    } finally {
      await api.close();
    }
    // Started again: nothing left to apply.
    const again: string[] = [];
    const second = await startApi(env(), (line) => again.push(line));
    await second.api.close();
    expect(again).toEqual([]);
  });

  it("says which backing service does not answer, and how to start it", async () => {
    await expect(startApi(env({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/prim" }))).rejects.toThrow(
      /Postgres does not answer at .*127\.0\.0\.1:1.*start it with: pg_ctlcluster/,
    );
    await expect(startApi(env({ REDIS_URL: "redis://127.0.0.1:1" }))).rejects.toThrow(
      "Redis does not answer at 127.0.0.1:1; start it with: redis-server",
    );
    await expect(startApi(env({ DATABASE_URL: "not a url" }))).rejects.toThrow(
      "invalid configuration:\n  DATABASE_URL: DATABASE_URL must be a postgres:// URL",
    );
  });

  it("exits 1 with one line, no stack, when it cannot start", { timeout: 60_000 }, async () => {
    const hooks = fileURLToPath(new URL("../../../scripts/register-source-hooks.mjs", import.meta.url));
    const entry = fileURLToPath(new URL("./run-api.ts", import.meta.url));
    const result = await promisify(execFile)(process.execPath, ["--import", "tsx", "--import", hooks, entry], {
      env: { ...process.env, ...env({ REDIS_URL: "redis://127.0.0.1:1" }) },
    }).catch((err: { code: number; stdout: string; stderr: string }) => err);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect((result as { stderr: string }).stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^prim cloud: Redis does not answer at 127\.0\.0\.1:1/),
    ]);
  });
});
