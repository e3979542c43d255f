import { describe, expect, it } from "vitest";
import { withMemory } from "./memory-helpers.js";

async function setup() {
  const server = await withMemory();
  const { api, base } = server;
  return {
    ...server,
    get: (id: string) => api("GET", `${base}/memories/${id}`),
    history: (id: string, query = "") => api("GET", `${base}/memories/${id}/history${query}`),
    forget: (id: string) => api("DELETE", `${base}/memories/${id}`),
    supersede: (id: string, body: Record<string, unknown>) => api("POST", `${base}/memories/${id}/supersede`, body),
  };
}

describe("memory: versions and compare-and-set", () => {
  it("remember on an existing id makes a new version; a stale if_version is a 412 and writes nothing", async () => {
    const { remember, get, clock } = await setup();
    const a = (await remember({ kind: "fact", text: "Ada prefers tea.", tags: ["ada"], metadata: { src: "chat" } }))
      .body;
    expect(a.version).toBe(1);
    clock.advance(5000);
    const changed = await remember({ id: a.id, kind: "preference", text: "Ada prefers coffee.", if_version: 1 });
    expect(changed.status).toBe(201);
    expect(changed.body).toMatchObject({
      id: a.id,
      version: 2,
      kind: "preference",
      text: "Ada prefers coffee.",
      tags: ["ada"], // left out: kept
      metadata: { src: "chat" },
      created_at: a.created_at,
      updated_at: clock.now(),
    });
    // Someone who read version 1 loses the race.
    const stale = await remember({ id: a.id, kind: "fact", text: "Ada prefers water.", if_version: 1 });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe("precondition_failed");
    expect(stale.body.error.message).toContain("has version 2");
    expect((await get(a.id)).body).toMatchObject({ text: "Ada prefers coffee.", version: 2 });
    // The rightful version succeeds; without if_version the change is unconditional.
    expect((await remember({ id: a.id, kind: "fact", text: "Ada drinks water.", if_version: 2 })).body).toMatchObject({
      version: 3,
    });
    expect((await remember({ id: a.id, kind: "fact", text: "Ada drinks juice.", tags: [] })).body).toMatchObject({
      version: 4,
      tags: [],
    });
  });

  it("refuses if_version without id (400), an unknown id (404) and a superseded memory (409)", async () => {
    const { remember, supersede } = await setup();
    expect((await remember({ kind: "fact", text: "x", if_version: 1 })).status).toBe(400);
    expect((await remember({ id: "mem_nope", kind: "fact", text: "x" })).status).toBe(404);
    const a = (await remember({ kind: "fact", text: "The office is on floor 3." })).body;
    await supersede(a.id, { text: "The office is on floor 4." });
    const res = await remember({ id: a.id, kind: "fact", text: "The office is on floor 5." });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
  });

  it("recall finds an updated memory by its new words only", async () => {
    const { remember, recallTexts } = await setup();
    const a = (await remember({ kind: "fact", text: "The deploy window is Tuesday." })).body;
    await remember({ id: a.id, kind: "fact", text: "The release window is Thursday." });
    expect(await recallTexts({ query: "Tuesday" })).toEqual([]);
    expect(await recallTexts({ query: "Thursday release" })).toEqual(["The release window is Thursday."]);
  });
});

describe("memory: history", () => {
  it("lists every change newest first, paged, ending in the forget tombstone", async () => {
    const { remember, history, forget, get, supersede, clock } = await setup();
    const a = (await remember({ kind: "fact", text: "Standup is at 9:30." })).body;
    clock.advance(1000);
    await remember({ id: a.id, kind: "fact", text: "Standup is at 9:45." });
    clock.advance(1000);
    const b = (await supersede(a.id, { text: "Standup is at 10:00." })).body;
    clock.advance(1000);
    expect((await forget(b.id)).status).toBe(200);
    const forgotAt = clock.now();
    expect((await get(b.id)).status).toBe(404);

    const all = (await history(a.id)).body;
    expect(all.next_cursor).toBeNull();
    expect(all.data.map((v: { op: string; version: number }) => [v.version, v.op])).toEqual([
      [3, "supersede"],
      [2, "update"],
      [1, "create"],
    ]);
    expect(all.data.map((v: { text: string }) => v.text)).toEqual([
      "Standup is at 9:45.",
      "Standup is at 9:45.",
      "Standup is at 9:30.",
    ]);
    expect(all.data[0]).toMatchObject({ superseded_by: b.id, at: all.data[0].updated_at });
    expect(all.data[2]).toMatchObject({ superseded_by: null, at: a.created_at });

    const page1 = (await history(b.id, "?limit=1")).body;
    expect(page1.data).toHaveLength(1);
    expect(page1.data[0]).toMatchObject({ op: "forget", version: 2, at: forgotAt, text: "Standup is at 10:00." });
    const page2 = (await history(b.id, `?limit=1&cursor=${page1.next_cursor}`)).body;
    expect(page2.data.map((v: { op: string }) => v.op)).toEqual(["create"]);
    expect(page2.next_cursor).toBeNull();

    expect((await history("mem_missing")).status).toBe(404);
  });

  it("keeps a tombstone 7 days, then erases the memory and its history at the next write", async () => {
    const { remember, history, forget, recallTexts, clock } = await setup();
    const a = (await remember({ kind: "fact", text: "The vault code is orange." })).body;
    const before = clock.now();
    clock.advance(1000);
    await forget(a.id);
    expect(await recallTexts({ query: "vault code" })).toEqual([]);
    expect(await recallTexts({ query: "vault code", as_of: before })).toEqual(["The vault code is orange."]);
    clock.advance(7 * 86_400_000 - 3000);
    await remember({ kind: "fact", text: "unrelated" }); // 2 s short of 7 days after the forget
    expect((await history(a.id)).status).toBe(200);
    clock.advance(1000);
    await remember({ kind: "fact", text: "unrelated too" });
    expect((await history(a.id)).status).toBe(404);
    expect(await recallTexts({ query: "vault code", as_of: before })).toEqual([]);
  });
});

describe("memory: recall as_of", () => {
  it("recalls the memories as they were: superseded ones then current, later ones left out, forgotten ones back", async () => {
    const { remember, supersede, forget, recall, clock } = await setup();
    const old = (await remember({ kind: "fact", text: "The staging database is Postgres 14." })).body;
    const gone = (await remember({ kind: "fact", text: "The staging database password rotates weekly." })).body;
    const edited = (await remember({ kind: "fact", text: "The staging database backups run nightly." })).body;
    const t1 = clock.now();
    clock.advance(60_000);
    const newer = (await supersede(old.id, { text: "The staging database is Postgres 16." })).body;
    await remember({ id: edited.id, kind: "fact", text: "The staging database backups run hourly." });
    await forget(gone.id);
    await remember({ kind: "fact", text: "The staging database moved to a new host." });

    const texts = async (body: Record<string, unknown>) =>
      ((await recall({ query: "staging database", ...body })).body.data as { text: string }[])
        .map((m) => m.text)
        .sort();
    expect(await texts({})).toEqual([
      "The staging database backups run hourly.",
      "The staging database is Postgres 16.",
      "The staging database moved to a new host.",
    ]);
    expect(await texts({ as_of: t1 })).toEqual([
      "The staging database backups run nightly.",
      "The staging database is Postgres 14.",
      "The staging database password rotates weekly.",
    ]);
    // An updated memory is found by the words it had then, and shown as it was.
    const nightly = (await recall({ query: "nightly", as_of: t1 })).body.data;
    expect(nightly.map((m: { id: string; text: string; version: number }) => [m.id, m.text, m.version])).toEqual([
      [edited.id, "The staging database backups run nightly.", 1],
    ]);
    expect(await texts({ query: "nightly" })).toEqual([]);
    expect((await recall({ query: "hourly", as_of: t1 })).body.data).toEqual([]);
    const past = (await recall({ query: "Postgres", as_of: t1 })).body.data;
    expect(past).toHaveLength(1);
    expect(past[0]).toMatchObject({ id: old.id, superseded_by: null, version: 1 });
    expect(past[0].op).toBeUndefined();
    // Superseded at t1 + 1 min: left out as of then unless asked for.
    const later = clock.now();
    expect((await recall({ query: "Postgres", as_of: later })).body.data.map((m: { id: string }) => m.id)).toEqual([
      newer.id,
    ]);
    expect(
      (await recall({ query: "Postgres", as_of: later, include_superseded: true })).body.data
        .map((m: { id: string }) => m.id)
        .sort(),
    ).toEqual([newer.id, old.id].sort());
    // Before anything existed: nothing.
    expect(await texts({ as_of: 0 })).toEqual([]);
  });
});

describe("memory: recall filters", () => {
  it("filters by kind, tags, creation time and min_score", async () => {
    const { remember, recall, clock } = await setup();
    await remember({ kind: "fact", text: "Billing runs on the first of the month.", tags: ["billing"] });
    const t0 = clock.now();
    await remember({ kind: "episode", text: "Billing failed for Acme yesterday.", tags: ["billing", "acme"] });
    const t1 = clock.now();
    await remember({ kind: "fact", text: "Billing emails come from billing@example.com.", tags: ["email"] });
    const texts = async (body: Record<string, unknown>) =>
      ((await recall({ query: "billing", ...body })).body.data as { text: string }[]).map((m) => m.text).sort();
    expect(await texts({ kinds: ["episode"] })).toEqual(["Billing failed for Acme yesterday."]);
    expect(await texts({ tags: ["billing", "acme"] })).toEqual(["Billing failed for Acme yesterday."]);
    expect(await texts({ since: t0 + 1 })).toEqual([
      "Billing emails come from billing@example.com.",
      "Billing failed for Acme yesterday.",
    ]);
    expect(await texts({ until: t1 - 1 })).toEqual(["Billing runs on the first of the month."]);
    expect(await texts({ since: t1, until: t1 })).toEqual(["Billing failed for Acme yesterday."]);
    const scored = (await recall({ query: "billing Acme" })).body.data as { score: number }[];
    expect(scored.length).toBe(3);
    const cut = (scored[0] as { score: number }).score;
    const top = (await recall({ query: "billing Acme", min_score: cut })).body.data as { score: number }[];
    expect(top.length).toBeGreaterThanOrEqual(1);
    expect(top.every((m) => m.score >= cut)).toBe(true);
    expect(top.length).toBeLessThan(3);
    expect((await recall({ query: "billing", min_score: 2 })).status).toBe(400);
    expect((await recall({ query: "billing", since: -1 })).status).toBe(400);
  });
});
