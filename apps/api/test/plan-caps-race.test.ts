// Plan caps under concurrency (issue 35, item 4): a count cap is checked and taken in the same
// Postgres transaction as the insert, so concurrent creates through two api apps over one
// database (each its own pool and limiter) never pass it.
import { createWorkspace } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let now = Date.UTC(2026, 10, 10, 12, 0, 0);
let cloud: TestCloud;
let second: string;

beforeAll(async () => {
  cloud = await startCloud("plan_caps_race", { PRIM_LIMITS: "on" }, { limits: { now: () => now, timeoutMs: 2000 } });
  second = (await cloud.second()).url;
});
afterAll(async () => {
  await cloud?.stop();
});

/** How many rows of `table` the workspace has in Postgres. */
async function rows(table: "primitives" | "groups", ws: string): Promise<number> {
  const { rows } = await cloud.api.hub.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1`, [
    ws,
  ]);
  return rows[0].n;
}

/** `n` creates at once, alternating between the two apps; answers their statuses and error codes. */
async function together(n: number, path: string, body: (i: number) => unknown, key: string) {
  now += 10_000; // a full rate-limit bucket: only the caps may refuse
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) => call(i % 2 === 0 ? cloud.url : second, key, "POST", path, body(i))),
  );
  return answers.map((a) => `${a.status} ${a.body.error?.code ?? "ok"}`);
}

const count = (answers: string[], answer: string) => answers.filter((a) => a === answer).length;

describe("Starter count caps hold under concurrent creates through two api apps", () => {
  it("primitives: creates below the cap succeed; 50 at once at 97 reach exactly 100, the rest answer 429 plan_limit", async () => {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "w", plan: "starter" });
    expect((await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
    const kv = (i: number) => ({ name: `p${i}`, type: "kv", group: "app" });
    // Below the cap, concurrent creates all succeed (the positive control).
    for (const from of [0, 40, 80]) {
      const upTo = Math.min(97, from + 40);
      const below = await together(upTo - from, "/v1/primitives", (i) => kv(from + i), ws.key);
      expect(below).toEqual(below.map(() => "201 ok"));
    }
    expect(await rows("primitives", ws.workspace.id)).toBe(97);

    const answers = await together(50, "/v1/primitives", (i) => kv(100 + i), ws.key);
    expect({ created: count(answers, "201 ok"), capped: count(answers, "429 plan_limit") }).toEqual({
      created: 3,
      capped: 47,
    });
    expect(await rows("primitives", ws.workspace.id)).toBe(100);
  });

  it("groups: of 10 concurrent creates on a Starter workspace without a group, exactly one succeeds; the rest answer 403 plan_limit", async () => {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "w", plan: "starter" });
    const answers = await together(10, "/v1/groups", (i) => ({ name: `g${i}` }), ws.key);
    expect({ created: count(answers, "201 ok"), refused: count(answers, "403 plan_limit") }).toEqual({
      created: 1,
      refused: 9,
    });
    expect(await rows("groups", ws.workspace.id)).toBe(1);
  });

  it("a Pro workspace is not capped: concurrent group creates all succeed", async () => {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "w", plan: "pro" });
    const answers = await together(10, "/v1/groups", (i) => ({ name: `g${i}` }), ws.key);
    expect(answers).toEqual(answers.map(() => "201 ok"));
  });
});
