// Security probe, issue 35 items 4 and 7, replayed against a running cloud (probe-cloud.ts: two
// api cells as child processes, limits on, durable, s3rver), as the holder of a Starter
// workspace's key trying to get past its plan:
//  4. Count caps under concurrency: 50 creates at once through both api processes, on a
//     workspace at 97 of its 100 primitives, end at exactly 100; 20 group creates at once on a
//     workspace with none end at its one group.
//  7. The storage cap covers queue batches: over 5 GB, `queue.send_batch` and
//     `queue.publish_batch` are refused (429 plan_limit) like their single forms.
import { createKey, STARTER_CAPS } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { limitKeys } from "../src/index.js";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";

let cloud: ProbeCloud;

beforeAll(async () => {
  cloud = await startProbeCloud("probe_caps");
}, 120_000);
afterAll(() => cloud?.stop(), 30_000);

const home = (ws: ProbeWorkspace) => cloud.cell(ws.cell).url;
/** The two api processes, taken in turn. */
const entry = (i: number) => cloud.cells[i % cloud.cells.length]?.url as string;

/** Each answer as `status code`, with how many gave it. */
function tally(answers: { status: number; body: any }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const what = a.body?.error?.code === undefined ? String(a.status) : `${a.status} ${a.body.error.code}`;
    out[what] = (out[what] ?? 0) + 1;
  }
  return out;
}

/** The entries of `tally` named in `keys` (the answers a probe accepts besides success). */
function only(answers: Record<string, number>, keys: string[]): Record<string, number> {
  return Object.fromEntries(Object.entries(answers).filter(([k]) => keys.includes(k)));
}

describe("item 4: count caps hold under concurrency", () => {
  it("ends at 100 primitives after 50 concurrent creates across two api processes from 97", async () => {
    // Seeded on Enterprise (its own high rate: the seeding is not the attack), then Starter.
    const ws = await cloud.workspace("crowded", "enterprise");
    await ok(home(ws), ws.key, "POST", "/v1/groups", { name: "app" });
    const seeded = STARTER_CAPS.primitives - 3;
    for (let from = 0; from < seeded; from += 10) {
      const batch = Array.from({ length: Math.min(10, seeded - from) }, (_, i) =>
        ok(home(ws), ws.key, "POST", "/v1/primitives", { name: `seed-${from + i}`, type: "kv", group: "app" }),
      );
      await Promise.all(batch);
    }
    await cloud.setPlan(ws.id, "starter");
    const racer = await createKey(cloud.pool, { workspace: ws.id }); // a fresh rate bucket (burst 60)
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(entry(i), racer.key, "POST", "/v1/primitives", { name: `race-${i}`, type: "kv", group: "app" }),
      ),
    );
    const listed = await ok(home(ws), ws.key, "GET", "/v1/primitives?group=app&limit=200");
    // The rightful creates below the cap succeed: exactly the three that fit; the rest are
    // refused at the cap (or by the rate limit, which 50 at once may reach while Redis is slow).
    const answered = tally(answers);
    expect({ answered, primitives: listed.data.length }).toEqual({
      answered: { 201: 3, ...only(answered, ["429 plan_limit", "429 rate_limited"]) },
      primitives: STARTER_CAPS.primitives,
    });
    expect(answered["429 plan_limit"]).toBeGreaterThan(0);
  }, 120_000);

  it("ends at one group after 20 concurrent group creates on a Starter workspace with none", async () => {
    const ws = await cloud.workspace("groups", "starter");
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(entry(i), ws.key, "POST", "/v1/groups", { name: `g${i}` })),
    );
    const groups = await ok(home(ws), ws.key, "GET", "/v1/groups");
    const answered = tally(answers);
    expect({ answered, groups: groups.data.length }).toEqual({
      answered: { 201: 1, ...only(answered, ["403 plan_limit", "429 rate_limited"]) },
      groups: 1,
    });
    expect(answered["403 plan_limit"]).toBeGreaterThan(0);
  }, 60_000);
});

describe("item 7: the Starter storage cap covers queue batches", () => {
  const DOWN = "limits: Redis does not answer";
  const BACK = "limits: Redis is back";

  /** Whether the cell's limiter is limiting alone (Redis slower than its 50 ms timeout, once). */
  const fellBack = (output: string) => output.lastIndexOf(DOWN) > output.lastIndexOf(BACK);

  /**
   * Runs `send` with the workspace's storage gauge over 5 GB. The cells re-measure the gauge
   * every 10 s; a run the gauge was re-measured across is tried again, so the answer is the
   * one a full workspace gets. So is a run during which the cell's limiter fell back to
   * limiting alone (a Redis command slower than 50 ms on a loaded machine counts as an outage,
   * and alone it knows only its own measurement, not the gauge set here): `voided` counts the
   * jobs such runs wrote.
   */
  async function overTheCap<T>(ws: ProbeWorkspace, send: () => Promise<T>, jobs: () => Promise<number>) {
    const gauge = limitKeys(ws.id).storage;
    const cell = cloud.cell(ws.cell).process;
    const full = String(STARTER_CAPS.storageBytes + 4096 + Math.floor(Math.random() * 4096));
    let voided = 0;
    for (let tries = 0; tries < 5; tries++) {
      await vi.waitFor(
        () => {
          if (fellBack(cell.output())) throw new Error("the cell's limiter is still limiting alone");
        },
        { timeout: 10_000, interval: 100 },
      );
      const downs = cell.output().split(DOWN).length;
      const before = await jobs();
      await cloud.redis.set(gauge, full);
      const answer = await send();
      if ((await cloud.redis.get(gauge)) !== full) continue;
      if (cell.output().split(DOWN).length === downs) return { answer, voided };
      voided += (await jobs()) - before;
    }
    throw new Error("the storage gauge was re-measured, or the limiter fell back, during every try");
  }

  it("answers 429 plan_limit to send_batch and publish_batch over 5 GB; below it they write", async () => {
    const ws = await cloud.workspace("full", "starter");
    const base = home(ws);
    await ok(base, ws.key, "POST", "/v1/groups", { name: "app" });
    const queue = (await ok(base, ws.key, "POST", "/v1/primitives", { name: "q", type: "queue", group: "app" })).id;
    const p = `/v1/primitives/${queue}`;
    await ok(base, ws.key, "POST", `${p}/topics/news/subscriptions`, { queue: "jobs" });
    const writes = {
      send: () => call(base, ws.key, "POST", `${p}/queues/jobs/messages`, { body: { n: 1 } }),
      send_batch: () =>
        call(base, ws.key, "POST", `${p}/queues/jobs/messages/batch`, { messages: [{ body: 1 }, { body: 2 }] }),
      publish: () => call(base, ws.key, "POST", `${p}/topics/news/publish`, { body: { n: 1 } }),
      publish_batch: () =>
        call(base, ws.key, "POST", `${p}/topics/news/publish/batch`, { messages: [{ body: 1 }, { body: 2 }] }),
    };
    const jobs = async () =>
      (await ok(base, ws.key, "GET", `${p}/queues/jobs/messages?limit=200`)).data.length as number;
    const answers: Record<string, string> = {};

    // Below the cap every form writes.
    for (const [name, write] of Object.entries(writes)) {
      const res = await write();
      answers[name] = res.body?.error?.code === undefined ? String(res.status) : `${res.status} ${res.body.error.code}`;
    }
    expect(answers).toEqual({ send: "201", send_batch: "200", publish: "200", publish_batch: "200" });
    const before = await jobs();
    expect(before).toBe(6);

    // Over it none does, batches included.
    let voided = 0;
    for (const [name, write] of Object.entries(writes)) {
      const tried = await overTheCap(ws, write, jobs);
      const res = tried.answer;
      voided += tried.voided;
      answers[name] = res.body?.error?.code === undefined ? String(res.status) : `${res.status} ${res.body.error.code}`;
    }
    await cloud.redis.set(limitKeys(ws.id).storage, "0");
    expect({ answers, jobs: await jobs() }).toEqual({
      answers: {
        send: "429 plan_limit",
        send_batch: "429 plan_limit",
        publish: "429 plan_limit",
        publish_batch: "429 plan_limit",
      },
      jobs: before + voided,
    });
  }, 60_000);
});
