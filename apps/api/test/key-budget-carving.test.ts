// A child's budget carved out of its parent's (issue 41, "Minted keys"), across two api
// processes with limits on (Redis): a budgeted key mints only budgeted children of its kind and
// no larger, each taking its budget off what the parent has left (concurrent mints never give
// more than the parent has); the family together spends no more than the parent's budget;
// revoking a child gives back what it did not spend. The first refusal of a spent budget is a
// `key.budget_exhausted` entry, and a child key's calls name its parent chain in the audit log.
import { createKey } from "@prim/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";

let cloud: ProbeCloud;
let ws: ProbeWorkspace;
let kvId: string;
let cells: string[];

beforeAll(async () => {
  cloud = await startProbeCloud("key_carving", undefined, { PRIM_LIMITS_TIMEOUT_MS: "2000" });
  // Enterprise at 10,000/s: the rate limit stays out of the way of the budgets.
  ws = await cloud.workspace("carvers", "enterprise", { on: "cell-a" });
  cells = [cloud.cell("cell-a").url, cloud.cell("cell-b").url];
  await ok(cells[0] as string, ws.key, "POST", "/v1/groups", { name: "app" });
  kvId = (await ok(cells[0] as string, ws.key, "POST", "/v1/primitives", { name: "state", type: "kv", group: "app" }))
    .id;
}, 120_000);
afterAll(async () => {
  await cloud?.stop();
});

async function call(key: string, method: string, path: string, body?: unknown, cell = 0) {
  const res = await fetch(`${cells[cell]}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const mint = (key: string, body: Record<string, unknown>, cell = 0) => call(key, "POST", "/v1/keys", body, cell);

/** `n` kv writes at once with `key`, alternating between the two processes: the statuses. */
async function burst(key: string, n: number): Promise<number[]> {
  for (const cell of [0, 1]) expect((await call(key, "GET", "/v1/whoami", undefined, cell)).status).toBe(200);
  return Promise.all(
    Array.from(
      { length: n },
      async (_, i) => (await call(key, "PUT", `/v1/primitives/${kvId}/keys/k${i}`, { value: i }, i % 2)).status,
    ),
  );
}
const admitted = (statuses: number[]) => statuses.filter((s) => s === 200).length;

describe("a child's budget is carved out of its parent's", () => {
  it("only the parent's kind, no larger than what is left; the family spends the parent's budget, no more", async () => {
    const parent = await createKey(cloud.pool, { workspace: ws.id, group: "app", budget: { total: 100 } });
    // Wider on the budget, each named: none, another kind, more than the whole.
    for (const body of [{}, { budget: { per: "day", limit: 10 } }, { budget: { total: 101 } }]) {
      const refused = await mint(parent.key, body);
      expect(refused.status, JSON.stringify(body)).toBe(403);
      expect(refused.body.error).toMatchObject({ code: "forbidden", message: expect.stringContaining("budget") });
    }
    const first = await mint(parent.key, { name: "sixty", budget: { total: 60 } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.budget).toEqual({ total: 60 });
    // 40 are left to give: 50 is refused naming what is left, 40 is granted (from the other process).
    const more = await mint(parent.key, { budget: { total: 50 } }, 1);
    expect(more.status).toBe(403);
    expect(more.body.error.message).toContain("40 operations left");
    const second = await mint(parent.key, { name: "forty", budget: { total: 40 } }, 1);
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    // The parent gave everything away: its own metered calls are refused, its unmetered ones answer.
    expect(await burst(parent.key, 2)).toEqual([403, 403]);
    // The first child spends exactly its 60 of 200 concurrent calls across both processes.
    expect(admitted(await burst(first.body.key, 200))).toBe(60);
    // Revoking the unspent second child gives its 40 back to the parent, and no more.
    expect((await call(parent.key, "DELETE", `/v1/keys/${second.body.id}`)).status).toBe(200);
    expect(admitted(await burst(parent.key, 100))).toBe(40);
    // Revoking the spent first child gives nothing back (what it spent stays spent).
    expect((await call(parent.key, "DELETE", `/v1/keys/${first.body.id}`)).status).toBe(200);
    expect(admitted(await burst(parent.key, 10))).toBe(0);
    const list = await call(parent.key, "GET", "/v1/keys");
    expect(list.body.data.map((k: { budget: unknown }) => k.budget)).toEqual([{ total: 60 }, { total: 40 }]);
  }, 90_000);

  it("20 concurrent mints of 10 from a budget of 100 across two processes: exactly 10 are granted", async () => {
    const parent = await createKey(cloud.pool, { workspace: ws.id, group: "app", budget: { total: 100 } });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => mint(parent.key, { name: `c${i}`, budget: { total: 10 } }, i % 2)),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
    for (const refused of answers.filter((a) => a.status !== 201)) expect(refused.status).toBe(403);
    // A key without a budget mints any budget, or none.
    const free = (await createKey(cloud.pool, { workspace: ws.id, group: "app" })).key;
    expect((await mint(free, { budget: { per: "day", limit: 5 } })).status).toBe(201);
    expect((await mint(free, {})).status).toBe(201);
  }, 60_000);

  it("a per-day parent gives a per-day child part of every day: together at most the parent's day", async () => {
    const parent = await createKey(cloud.pool, { workspace: ws.id, group: "app", budget: { per: "day", limit: 30 } });
    expect((await mint(parent.key, { budget: { total: 5 } })).status).toBe(403);
    const child = await mint(parent.key, { budget: { per: "day", limit: 10 } });
    expect(child.status, JSON.stringify(child.body)).toBe(201);
    expect(admitted(await burst(child.body.key, 50))).toBe(10);
    const refusals = await burst(parent.key, 50);
    expect(admitted(refusals)).toBe(20);
    expect(refusals.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
  }, 60_000);
});

describe("audit", () => {
  it("a spent budget is one key.budget_exhausted entry; a grandchild's calls name its parents", async () => {
    const top = await createKey(cloud.pool, { workspace: ws.id, group: "app" });
    const child = await mint(top.key, { name: "orchestrator", budget: { total: 3 } });
    const grandchild = await mint(child.body.key, { name: "worker", budget: { total: 2 } });
    expect(grandchild.status, JSON.stringify(grandchild.body)).toBe(201);
    expect(admitted(await burst(grandchild.body.key, 5))).toBe(2);
    const audit = async (query: string) =>
      (await call(ws.key, "GET", `/v1/audit?${query}`)).body.data as { actor: string; action: string; detail: any }[];
    let spent: { actor: string; action: string; detail: any }[] = [];
    for (let i = 0; i < 50 && spent.length === 0; i++) {
      spent = await audit(`action=key.budget_exhausted&actor=key:${grandchild.body.id}`);
      if (spent.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(spent).toHaveLength(1);
    expect(spent[0]?.detail).toMatchObject({ budget: { total: 2 } });
    // The grandchild's writes: each entry names its chain, its parent first.
    let writes: { detail: any }[] = [];
    for (let i = 0; i < 50 && writes.length < 2; i++) {
      writes = await audit(`action=kv.set&actor=key:${grandchild.body.id}`);
      if (writes.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(writes.length).toBeGreaterThanOrEqual(2);
    for (const entry of writes) expect(entry.detail.parents).toEqual([child.body.id, top.id]);
    // A key nobody minted: no parents in its entries.
    await call(top.key, "PUT", `/v1/primitives/${kvId}/keys/top`, { value: 1 });
    let own: { detail: any }[] = [];
    for (let i = 0; i < 50 && own.length === 0; i++) {
      own = await audit(`action=kv.set&actor=key:${top.id}`);
      if (own.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(own[0]?.detail?.parents).toBeUndefined();
  }, 60_000);
});
