// Recall's lexical ranking (proximity.ts): coverage of the query weighted by rarity, and the
// closeness of the query's words in a memory. Unit checks of the score, then recall through a
// real store (SQLite in memory, no embedder).
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ChangeLog, DEFAULT_CHANGE_RETENTION } from "../../src/primitives/changes/log.js";
import {
  capitalPositions,
  idf,
  proximityRanked,
  proximityScore,
  sameStem,
} from "../../src/primitives/memory/proximity.js";
import { MemoryStore } from "../../src/primitives/memory/store.js";
import { words } from "../../src/primitives/memory/text.js";

const ADJACENT = "Clean up the feature flags left over from the onboarding redesign by next sprint.";
const SCATTERED = "The feature list of the onboarding redesign left over for the next sprint flags.";
const FEATURE_FLAGS = [
  { forms: ["feature"], docs: 40 },
  { forms: ["flags"], docs: 40 },
];

function openStore() {
  const db = new Database(":memory:");
  const clock = new ManualClock(1_800_000_000_000);
  const log = new ChangeLog(db, clock, { enabled: true, retention: DEFAULT_CHANGE_RETENTION });
  return new MemoryStore(db, clock, log);
}

describe("memory recall: proximity ranking", () => {
  it("scores a text holding the query's words adjacent above one holding them scattered", () => {
    const adjacent = words(ADJACENT);
    const scattered = words(SCATTERED);
    expect(adjacent.length).toBe(scattered.length);
    const weight = idf(40, 1000);
    // Texts of average length: each held word adds its IDF; a pair d ≤ 8 apart adds half the
    // rarer one's ÷ √d (here adjacent: d = 1); the scattered pair is 12 apart.
    expect(proximityScore(adjacent, FEATURE_FLAGS, 1000, adjacent.length)).toBeCloseTo(2.5 * weight, 9);
    expect(proximityScore(scattered, FEATURE_FLAGS, 1000, adjacent.length)).toBeCloseTo(2 * weight, 9);
    // A longer text than average holds the same words with less weight (BM25's normalisation).
    expect(proximityScore(scattered, FEATURE_FLAGS, 1000, adjacent.length / 2)).toBeLessThan(2 * weight);
  });

  it("weighs a rare query word above a common one, and holds nothing for a text without them", () => {
    const groups = [
      { forms: ["kafka"], docs: 900 },
      { forms: ["retention"], docs: 3 },
    ];
    const rare = proximityScore(words("retention is fourteen days"), groups, 1000, 4);
    const common = proximityScore(words("kafka is fourteen days"), groups, 1000, 4);
    expect(rare).toBeGreaterThan(common);
    expect(proximityScore(words("nothing in common here"), groups, 1000, 4)).toBe(0);
  });

  it("counts a pair held in the query's order above the same pair reversed", () => {
    const weight = idf(40, 1000);
    const inOrder = words("remove the feature flags");
    const reversed = words("flags feature, remove the");
    expect(proximityScore(inOrder, FEATURE_FLAGS, 1000, 4)).toBeCloseTo(2.5 * weight, 9);
    expect(proximityScore(reversed, FEATURE_FLAGS, 1000, 4)).toBeCloseTo((2 + 0.5 * 0.75) * weight, 9);
    // Held both ways: the better of the two counts, once.
    expect(proximityScore(words("flags feature flags"), FEATURE_FLAGS, 1000, 3)).toBeCloseTo(2.5 * weight, 9);
  });

  it("keeps the given order among equal scores", () => {
    const texts = new Map([
      [1, "feature flags"],
      [2, "Feature flags."],
      [3, "no match"],
    ]);
    expect(proximityRanked([3, 2, 1], texts, FEATURE_FLAGS, 1000)).toEqual([2, 1, 3]);
  });

  it("matches stems differing in a last letter only when they are long", () => {
    expect(sameStem("expir", "expiry")).toBe(true);
    expect(sameStem("polici", "policy")).toBe(true);
    expect(sameStem("contract", "contrast")).toBe(false);
    expect(sameStem("mode", "model")).toBe(false);
    expect(sameStem("expir", "expire")).toBe(true);
  });

  it("recalls the memory with the query's words together first, whichever was stored first", async () => {
    for (const order of [0, 1]) {
      const store = openStore();
      const texts = order === 0 ? [SCATTERED, ADJACENT] : [ADJACENT, SCATTERED];
      for (const text of texts) await store.remember({ kind: "task", text, tags: [], owner: null, metadata: "{}" });
      // Memories holding one of the words only, so the two above are not the only candidates.
      for (let i = 0; i < 20; i++) {
        const text = `${i % 2 === 0 ? "Feature" : "Flags"} note ${i} about something else entirely.`;
        await store.remember({ kind: "fact", text, tags: [], owner: null, metadata: "{}" });
      }
      const hits = await store.recall({ query: "feature flags", limit: 3, includeSuperseded: false });
      expect(hits[0]?.row.text, `stored ${order === 0 ? "scattered" : "adjacent"} first`).toBe(ADJACENT);
      expect(hits[1]?.row.text).toBe(SCATTERED);
    }
  });

  it("holds a query's acronym where the text spells it out, and not where it does not", () => {
    const slo = [{ forms: ["slo"], docs: 10, acronym: true }];
    const weight = idf(10, 1000);
    const expanded = words("The service level objective is 99.9 percent.");
    expect(proximityScore(expanded, slo, 1000, expanded.length)).toBeCloseTo(weight, 9);
    // Not an acronym in the query (written in lower case): the word only.
    expect(proximityScore(expanded, [{ forms: ["slo"], docs: 10 }], 1000, expanded.length)).toBe(0);
    // Initials out of order, or a run ending on a stop word, are not the acronym.
    expect(proximityScore(words("objective level service"), slo, 1000, 3)).toBe(0);
    const ci = [{ forms: ["ci"], docs: 10, acronym: true }];
    expect(proximityScore(words("cache is warm"), ci, 1000, 3)).toBe(0);
    expect(proximityScore(words("continuous integration is green"), ci, 1000, 4)).toBeGreaterThan(0);
  });

  it("holds the query's words where the text writes their initials in capitals", () => {
    const groups = ["service", "level", "objective"].map((w) => ({ forms: [w], docs: 10 }));
    const text = "Our SLO is 99.9 percent.";
    const capitals = capitalPositions(text);
    expect([...capitals]).toEqual([1]);
    expect(proximityScore(words(text), groups, 1000, 6, capitals)).toBeCloseTo(3 * idf(10, 1000), 9);
    expect(proximityScore(words(text), groups, 1000, 6)).toBe(0);
    // Only words written in capitals, of 3+ letters, stand for the query's words.
    expect([...capitalPositions("Our Slo is fine")]).toEqual([]);
    const two = ["service", "level"].map((w) => ({ forms: [w], docs: 10 }));
    expect(proximityScore(words("Our SL is 99"), two, 1000, 4, capitalPositions("Our SL is 99"))).toBe(0);
  });

  it("recalls the memory spelling out the query's acronym above one holding its other word only", async () => {
    const store = openStore();
    const answer = "The service level objective for the public API is 99.9 percent per month.";
    for (const text of [answer, "The API gateway logs requests.", "API keys rotate monthly."]) {
      await store.remember({ kind: "fact", text, tags: [], owner: null, metadata: "{}" });
    }
    const hits = await store.recall({ query: "SLO for the API", limit: 3, includeSuperseded: false });
    expect(hits[0]?.row.text).toBe(answer);
    // Lower case, "slo" is a word no memory holds: the shorter memories holding "API" come first.
    const lower = await store.recall({ query: "slo for the api", limit: 3, includeSuperseded: false });
    expect(lower[0]?.row.text).not.toBe(answer);
  });
});
