import { describe, expect, it } from "vitest";
import { type MemoryInput, withMemory } from "./memory-helpers.js";

const NOTES: MemoryInput[] = [
  { kind: "fact", tags: ["infra"], text: "Kubernetes upgrades are done one minor version at a time, staging first." },
  {
    kind: "fact",
    tags: ["infra", "deploy"],
    text: "Rolling back a deployment: revert the image tag and let Argo CD resync.",
  },
  { kind: "fact", tags: ["billing"], text: "The billing service stores invoices in a PostgreSQL database." },
  { kind: "fact", tags: ["billing"], text: "Refunds over 500 euros need approval from finance." },
  { kind: "fact", tags: ["auth"], text: "Password reset links are valid for one hour and can be used once." },
  { kind: "preference", tags: ["ui"], owner: "alice", text: "Alice prefers dark mode in every editor." },
  { kind: "preference", tags: ["ui"], owner: "bob", text: "Bob prefers light mode and a large font." },
  { kind: "preference", tags: ["food"], owner: "bob", text: "Bob drinks his coffee black." },
  { kind: "preference", tags: ["food"], owner: "alice", text: "Alice takes oat milk in her coffee." },
  { kind: "episode", tags: ["incident"], text: "The API was down for 40 minutes after a TLS certificate expired." },
  {
    kind: "episode",
    tags: ["incident", "billing"],
    text: "A Stripe webhook processed twice double-charged customers.",
  },
  { kind: "fact", tags: ["data"], text: "Kafka retention is seven days for event topics." },
  { kind: "fact", tags: ["mobile"], text: "Mobile releases ship every two weeks on Tuesday." },
  { kind: "fact", tags: ["frontend"], text: "End-to-end tests run with Playwright on every pull request." },
];

async function seeded() {
  const server = await withMemory();
  for (const note of NOTES) expect((await server.remember(note)).status).toBe(201);
  return server;
}

describe("memory: recall ranking", () => {
  it("ranks the memory that answers a query first, across typos, word forms and shared words", async () => {
    const { recallTexts } = await seeded();
    const cases: [string, string][] = [
      ["how do we roll back a deployment", "Rolling back a deployment"],
      ["kubernets upgarde policy", "Kubernetes upgrades"], // two typos
      ["passwrod reset expiry", "Password reset links"],
      ["which database holds the invoices", "The billing service stores invoices"],
      ["deploying rollbacks", "Rolling back a deployment"], // word forms
      ["certifcate outage", "The API was down"],
      ["how does Bob drink his coffee", "Bob drinks his coffee black."],
      ["Alice coffee", "Alice takes oat milk"],
      ["refund aproval", "Refunds over 500 euros"],
    ];
    for (const [query, expected] of cases) {
      const texts = await recallTexts({ query });
      expect(texts[0], `${query} → ${texts.join(" | ")}`).toContain(expected);
    }
  });

  it("returns records with a score from 0 to 1, best first", async () => {
    const { recall } = await seeded();
    const res = await recall({ query: "Bob coffee", limit: 5 });
    expect(res.status).toBe(200);
    const scores = res.body.data.map((m: { score: number }) => m.score);
    expect(scores.length).toBeGreaterThan(1);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const s of scores) expect(s > 0 && s <= 1).toBe(true);
    expect(Object.keys(res.body.data[0]).sort()).toContain("score");
    expect(res.body.data[0].text).toBe("Bob drinks his coffee black.");
  });

  it("breaks ties by recency: of two equal memories the newer comes first", async () => {
    const { remember, recall } = await withMemory();
    const older = (await remember({ kind: "fact", text: "The office wifi is called Lindenhof." })).body;
    const newer = (await remember({ kind: "fact", text: "The office wifi is called Lindenhof." })).body;
    const ids = (await recall({ query: "office wifi" })).body.data.map((m: { id: string }) => m.id);
    expect(ids).toEqual([newer.id, older.id]);
  });

  it("returns nothing when no word matches, and reads query syntax as plain words", async () => {
    const { recall } = await seeded();
    expect((await recall({ query: "zeppelin" })).body).toEqual({ data: [] });
    expect((await recall({ query: "?!? ..." })).body).toEqual({ data: [] });
    for (const query of ['"unbalanced', "coffee AND NOT milk", "NEAR(coffee black)", "coffee*", "a OR (b", "col:x"]) {
      const res = await recall({ query });
      expect(res.status, query).toBe(200);
    }
    expect((await recall({ query: "coffee AND NOT milk" })).body.data.length).toBeGreaterThan(0);
  });
});

describe("memory: recall filters and limits", () => {
  it("filters by kinds (any), tags (all), owner, applied before ranking", async () => {
    const { recall } = await seeded();
    const texts = async (body: Record<string, unknown>) =>
      (await recall(body)).body.data.map((m: { text: string }) => m.text);
    expect(await texts({ query: "coffee", owner: "alice" })).toEqual(["Alice takes oat milk in her coffee."]);
    expect(await texts({ query: "prefers mode", kinds: ["fact", "episode"] })).toEqual([]);
    expect((await texts({ query: "prefers mode", kinds: ["preference"] })).length).toBe(2);
    expect(await texts({ query: "billing stripe invoices", tags: ["incident", "billing"] })).toEqual([
      "A Stripe webhook processed twice double-charged customers.",
    ]);
    expect(await texts({ query: "billing", tags: ["billing", "nope"] })).toEqual([]);
    expect(await texts({ query: "mode", owner: "bob", kinds: ["preference"], tags: ["ui"] })).toEqual([
      "Bob prefers light mode and a large font.",
    ]);
  });

  it("finds a filtered memory however many unfiltered ones outrank it", async () => {
    const { remember, recall, api, base } = await withMemory();
    // 250 of Bob's memories say "coffee" more often than Alice's one: all rank above hers.
    await Promise.all(
      Array.from({ length: 250 }, (_, i) =>
        api("POST", `${base}/memories`, { kind: "fact", owner: "bob", text: `Coffee, coffee, coffee: cup ${i}.` }),
      ),
    );
    const alice = (await remember({ kind: "fact", owner: "alice", text: "Alice drinks coffee with oat milk." })).body;
    const res = await recall({ query: "coffee", owner: "alice" });
    expect(res.body.data.map((m: { id: string }) => m.id)).toEqual([alice.id]);
    expect((await recall({ query: "coffee", kinds: ["fact"], limit: 100 })).body.data).toHaveLength(100);
  });

  it("returns at most limit results (default 10, max 100)", async () => {
    const { remember, recall } = await withMemory();
    for (let i = 0; i < 14; i++) await remember({ kind: "fact", text: `Coffee note number ${i}.` });
    expect((await recall({ query: "coffee" })).body.data).toHaveLength(10);
    expect((await recall({ query: "coffee", limit: 3 })).body.data).toHaveLength(3);
    expect((await recall({ query: "coffee", limit: 100 })).body.data).toHaveLength(14);
    for (const limit of [0, 101, 2.5, "5"]) {
      const res = await recall({ query: "coffee", limit });
      expect(res.status, String(limit)).toBe(400);
      expect(res.body.error.message).toContain("limit");
    }
  });

  it("answers 400 for an empty, blank or too long query and unknown fields", async () => {
    const { recall } = await seeded();
    const cases: [Record<string, unknown>, string][] = [
      [{}, "query: required"],
      [{ query: "" }, "query: must not be empty"],
      [{ query: "   " }, "query: must not be empty"],
      [{ query: "x".repeat(2001) }, "query: must be at most 2000 characters"],
      [{ query: "x", kinds: "fact" }, "kinds:"],
      [{ query: "x", include_superseded: "maybe" }, "include_superseded:"],
      [{ query: "x", text: "y" }, "unknown field: text"],
    ];
    for (const [body, message] of cases) {
      const res = await recall(body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toContain(message);
    }
  });
});
