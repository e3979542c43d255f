import { describe, expect, it } from "vitest";
import { type MemoryInput, withMemory } from "./memory-helpers.js";

/** The crafted set: which memories are near-duplicates of which, and which must stay apart. */
const SET: (MemoryInput & { name: string })[] = [
  { name: "dark1", kind: "preference", owner: "alice", text: "Alice prefers dark mode in the editor." },
  { name: "other", kind: "fact", owner: "alice", text: "Alice's billing service stores invoices in PostgreSQL." },
  // Exact duplicate, up to case and punctuation.
  { name: "dark2", kind: "preference", owner: "alice", text: "alice prefers DARK mode in the editor" },
  // Same text, another owner: must not merge.
  { name: "bobDark", kind: "preference", owner: "bob", text: "Alice prefers dark mode in the editor." },
  // Same text, another kind: must not merge.
  { name: "factDark", kind: "fact", owner: "alice", text: "Alice prefers dark mode in the editor." },
  // Reworded: other word order and word forms, function words.
  {
    name: "reworded",
    kind: "fact",
    owner: "alice",
    text: "Invoices of Alice's billing service are stored in PostgreSQL.",
  },
  // Near but different: one content word changed (0.67): must not merge at the default.
  { name: "light", kind: "preference", owner: "alice", text: "Alice prefers light mode in the editor." },
  { name: "mysql", kind: "fact", owner: "alice", text: "Alice's billing service stores invoices in MySQL." },
  // Newest of the dark-mode cluster: in her editors (word forms).
  { name: "dark3", kind: "preference", owner: "alice", text: "In her editors, Alice preferred dark mode!" },
];

async function crafted() {
  const server = await withMemory();
  const ids: Record<string, string> = {};
  for (const { name, ...input } of SET) ids[name] = (await server.remember(input)).body.id;
  const get = async (name: string) => (await server.api("GET", `${server.base}/memories/${ids[name]}`)).body;
  const consolidate = (body: Record<string, unknown> = {}) => server.api("POST", `${server.base}/consolidate`, body);
  return { ...server, ids, get, consolidate };
}

describe("memory: consolidate", () => {
  it("merges exact and reworded duplicates into the newest, never across owners or kinds", async () => {
    const { ids, get, consolidate, clock, api, base } = await crafted();
    const res = await consolidate();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ merged: 2, superseded: [ids.dark1, ids.dark2, ids.other].sort() });

    expect(await get("dark1")).toMatchObject({ superseded_by: ids.dark3, updated_at: clock.now() });
    expect(await get("dark2")).toMatchObject({ superseded_by: ids.dark3 });
    expect(await get("dark3")).toMatchObject({ superseded_by: null, supersedes: [ids.dark1, ids.dark2] });
    expect(await get("other")).toMatchObject({ superseded_by: ids.reworded });
    expect(await get("reworded")).toMatchObject({ superseded_by: null, supersedes: [ids.other] });
    for (const name of ["bobDark", "factDark", "light", "mysql"]) {
      expect(await get(name), name).toMatchObject({ superseded_by: null, supersedes: [] });
    }
    expect((await api("GET", `${base}/stats`)).body.items).toBe(SET.length - 3);
  });

  it("is deterministic and idempotent: a second run changes nothing", async () => {
    const first = await crafted();
    const second = await crafted();
    const a = (await first.consolidate()).body;
    const b = (await second.consolidate()).body;
    const names = (server: typeof first, ids: string[]) =>
      ids.map((id) => Object.entries(server.ids).find(([, v]) => v === id)?.[0]).sort();
    expect(names(first, a.superseded)).toEqual(names(second, b.superseded));
    expect((await first.consolidate()).body).toEqual({ merged: 0, superseded: [] });
  });

  it("takes a threshold from 0.5 to 1: lower merges more, 1 merges only same-word texts", async () => {
    const strict = await crafted();
    const exact = (await strict.consolidate({ threshold: 1 })).body;
    // At 1 the reworded pair (same words after stemming) still merges; "light" does not.
    expect(exact.merged).toBe(2);
    const loose = await crafted();
    const res = (await loose.consolidate({ threshold: 0.6 })).body;
    // 0.67-similar pairs now merge too: light joins dark, mysql joins the invoices pair.
    expect(res.superseded).toContain(loose.ids.light);
    expect(res.superseded).toContain(loose.ids.other);
    expect(res.superseded).not.toContain(loose.ids.bobDark);
    expect(res.superseded).not.toContain(loose.ids.factDark);
    for (const threshold of [0.4, 1.5, "high"]) {
      const bad = await loose.consolidate({ threshold });
      expect(bad.status, String(threshold)).toBe(400);
      expect(bad.body.error.code).toBe("invalid_request");
      expect(bad.body.error.message).toContain("threshold");
    }
  });

  it("leaves superseded memories out: they are neither merged nor kept", async () => {
    const { remember, api, base } = await withMemory();
    const consolidate = () => api("POST", `${base}/consolidate`, {});
    const a = (await remember({ kind: "fact", text: "Standup is at 9:30." })).body;
    const b = (await api("POST", `${base}/memories/${a.id}/supersede`, { text: "Standup is at 10:00." })).body;
    const c = (await remember({ kind: "fact", text: "Standup is at 9:30." })).body;
    // a (superseded) and c are identical, but only live memories are consolidated.
    expect((await consolidate()).body).toEqual({ merged: 0, superseded: [] });
    expect((await api("GET", `${base}/memories/${c.id}`)).body.superseded_by).toBeNull();
    expect(b.supersedes).toEqual([a.id]);
  });
});
