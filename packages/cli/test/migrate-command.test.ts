import { freshDatabase, runPrimCommand } from "@prim/testkit";
import { afterAll, describe, expect, it } from "vitest";

const db = freshDatabase("cli");
afterAll(() => db.drop());

const prim = runPrimCommand;

// Each test starts the real command (from sources, through tsx): give it room under a parallel run.
describe("prim migrate", { timeout: 60_000 }, () => {
  it("creates and migrates the database named by DATABASE_URL, then finds it up to date", async () => {
    const first = await prim(["migrate"], { ...process.env, DATABASE_URL: db.url });
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toMatch(
      /^prim migrate: applied \S+_init\n(prim migrate: applied \S+\n)*prim migrate: applied \d+ migrations? to postgres:/,
    );
    const second = await prim(["migrate", "--database-url", db.url]);
    expect(second).toMatchObject({ code: 0, stdout: `prim migrate: ${db.url} is up to date\n` });
  });

  it("says in one line, without a stack or the password, that Postgres does not answer", async () => {
    const down = await prim(["migrate", "--database-url", "postgres://postgres:hunter2@127.0.0.1:1/prim"]);
    expect(down.code).toBe(1);
    expect(down.stdout).toBe("");
    expect(down.stderr.trim().split("\n")).toHaveLength(1);
    expect(down.stderr).toContain("Postgres does not answer at postgres://postgres@127.0.0.1:1/prim (ECONNREFUSED)");
    expect(down.stderr).not.toContain("hunter2");
  });
});
