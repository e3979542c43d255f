// Recall's vector signal through the IVF index (vectors.ts), with a deterministic local
// embedder stand-in: feature hashing of words into a fixed dimension, where the words of one
// concept share a dimension (so a paraphrase with no word in common is near, as with a real
// model). Real SQLite, the store as the engine opens it, a small training threshold.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ChangeLog, DEFAULT_CHANGE_RETENTION } from "../../src/primitives/changes/log.js";
import type { Embedder } from "../../src/primitives/memory/embedder.js";
import { decodeVector, encodeVector } from "../../src/primitives/memory/embedder.js";
import { type SqlFilter, StatementCache, sqlFilter } from "../../src/primitives/memory/filter.js";
import type { RecallOptions } from "../../src/primitives/memory/recall.js";
import { MemoryStore } from "../../src/primitives/memory/store.js";
import { kMeans, VectorIndex, type VectorIndexOptions } from "../../src/primitives/memory/vectors.js";

const DIMS = 64;
const CONCEPTS = [
  ["car", "automobile", "vehicle"],
  ["maintenance", "upkeep", "servicing", "repair"],
  ["coffee", "espresso"],
];

function fnv(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/**
 * Feature hashing: a concept's words add 3 to the concept's own dimension; any other word adds
 * ±(0.1..1.1) to three hashed dimensions past the concepts' (real weights, so ties are rare).
 */
function embedText(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const concept = CONCEPTS.findIndex((c) => c.includes(word));
    if (concept >= 0) {
      v[concept] = (v[concept] as number) + 3;
      continue;
    }
    for (let j = 0; j < 3; j++) {
      const h = fnv(`${word}#${j}`);
      const dim = CONCEPTS.length + (h % (DIMS - CONCEPTS.length));
      const weight = 0.1 + ((h >>> 8) % 1000) / 1000;
      v[dim] = (v[dim] as number) + (h & 0x80000000 ? -weight : weight);
    }
  }
  return v;
}

const hashingEmbedder: Embedder = { embed: async (texts) => texts.map(embedText) };

const SYLLABLES = ["ba", "ke", "lo", "mi", "nu", "po", "ra", "si", "tu", "ve"];

/** Memory i of the filler: six words of a hundred made-up ones, picked by a seeded LCG. */
function filler(i: number): string {
  let state = (i * 2654435761 + 12345) >>> 0;
  const words: string[] = [];
  for (let k = 0; k < 6; k++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const w = (state >>> 8) % 100;
    words.push(`${SYLLABLES[w % 10]}${SYLLABLES[Math.floor(w / 10)]}x`);
  }
  return words.join(" ");
}

function openStore(options: VectorIndexOptions, db = new Database(":memory:")) {
  const clock = new ManualClock(1_800_000_000_000);
  const log = new ChangeLog(db, clock, { enabled: true, retention: DEFAULT_CHANGE_RETENTION });
  const store = new MemoryStore(db, clock, log, hashingEmbedder, { vectors: options });
  return { store, db, clock };
}

async function fill(store: MemoryStore, clock: ManualClock, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    clock.advance(1000);
    await store.remember({ kind: "fact", text: filler(i), tags: [], owner: null, metadata: "{}" });
  }
}

/**
 * Memories every filter picks apart (6 vectors, one on a past row): a preference with a tag
 * and an owner, a superseded one, a forgotten one and an updated one. `before` is before the
 * changes.
 */
async function specials(store: MemoryStore, clock: ManualClock) {
  const add = async (text: string, extra: { kind?: string; owner?: string; tags?: string[] } = {}) => {
    clock.advance(1000);
    const memory = {
      kind: extra.kind ?? "fact",
      text,
      tags: extra.tags ?? [],
      owner: extra.owner ?? null,
      metadata: "{}",
    };
    return (await store.remember(memory)).record;
  };
  await add("The car needs servicing in May.", { kind: "preference", owner: "ada", tags: ["garage"] });
  const old = await add("The vehicle repair shop closes at six.");
  const gone = await add("Bob drinks espresso.");
  const changed = await add("Coffee beans are in the car.");
  clock.advance(1000);
  const before = clock.now();
  clock.advance(1000);
  await store.supersede(old.id, { text: "The vehicle repair shop closes at seven." });
  await store.forget(gone.id);
  await store.update(
    changed.id,
    { kind: "fact", text: "Tea bags are in the automobile.", tags: ["garage"] },
    undefined,
  );
  const texts = [old.text, gone.text, changed.text, "Tea bags are in the automobile."];
  return { before, texts };
}

const indexes = new WeakMap<Database.Database, VectorIndex>();

/** With every list probed, the IVF answers what exact search over every vector answers. */
function expectIvfEqualsExact(db: Database.Database, filters: SqlFilter[], queries: Float32Array[]): void {
  let index = indexes.get(db);
  if (index === undefined) {
    index = new VectorIndex(db, new StatementCache(db), { nprobe: 1000 });
    indexes.set(db, index);
  }
  index.load(); // the lists as the file has them now
  for (const f of filters) {
    for (const q of queries) expect(index.search(q, f, 10)).toEqual(index.exact(q, f, 10, -1));
  }
}

type Filters = Partial<Omit<RecallOptions, "query" | "limit" | "queryVector">>;
const ids = async (store: MemoryStore, query: string, extra: Filters = {}) =>
  (await store.recall({ query, limit: 5, includeSuperseded: false, ...extra })).map((h) => h.row.text);

describe("memory: vector recall through the IVF index", () => {
  it("trains off the writes, in steps, and stays equal to exact search between steps and across a reopen", async () => {
    // Every list probed: the IVF must then answer exactly what exact search answers, whatever
    // the state of a training (lists half moved, vectors with no list yet).
    const options = { minVectors: 32, nprobe: 1000, background: false };
    let { store, db, clock } = openStore(options);
    const state = () => db.prepare("SELECT dims, trained_on, bank FROM memory_ivf_state").get();
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    await fill(store, clock, 26);
    const special = await specials(store, clock);
    // 32 vectors: the write that reached the threshold did not train.
    expect(state()).toBeUndefined();
    const filters = [
      sqlFilter({ includeSuperseded: false }),
      sqlFilter({ includeSuperseded: true }),
      sqlFilter({ includeSuperseded: false, kinds: ["preference"] }),
      sqlFilter({ includeSuperseded: false, tags: ["garage"] }),
      sqlFilter({ includeSuperseded: false, owner: "ada" }),
      sqlFilter({ includeSuperseded: false, asOf: special.before }),
      sqlFilter({ includeSuperseded: false, since: special.before }),
    ];
    const queries = [...special.texts, filler(7), "automobile upkeep"].map(
      (t) => decodeVector(encodeVector(embedText(t)) as Buffer) as Float32Array,
    );
    const agrees = () => expectIvfEqualsExact(db, filters, queries);
    const seen = { unindexed: 0, twoBanks: 0 };
    const settle = async (onStep = async () => {}) => {
      agrees();
      // Budget 0: the smallest steps (64 points of k-means, one vector moved), so the index is
      // searched in many intermediate states: after each of the first steps, then every third.
      for (let step = 0; await store.maintainVectors(0); step++) {
        const unindexed = count("SELECT count(*) AS n FROM memories WHERE vector IS NOT NULL AND ivf_list IS NULL");
        if (unindexed > 0) seen.unindexed++;
        if (count("SELECT count(DISTINCT list / 4096) AS n FROM memory_ivf") === 2) seen.twoBanks++;
        if (step < 16 || step % 3 === 0) agrees();
        await onStep();
      }
      agrees();
    };
    await settle();
    expect(state()).toEqual({ dims: DIMS, trained_on: 32, bank: 0 });
    expect(count("SELECT count(*) AS n FROM memory_ivf")).toBe(16);
    expect(seen.unindexed).toBeGreaterThan(0); // searched while vectors were being put in lists
    const vectors = "SELECT count(*) AS n FROM memories WHERE vector IS NOT NULL";
    expect(count("SELECT count(*) AS n FROM memory_ivf_entries")).toBe(count(vectors));

    // 4 × 32 vectors: due again; writes still only put new vectors in the current lists.
    await fill(store, clock, 100);
    expect(state()).toEqual({ dims: DIMS, trained_on: 32, bank: 0 });
    let reopened = false;
    await settle(async () => {
      // Reopened halfway through the move: both banks come back from the file.
      if (!reopened && seen.twoBanks > 2) {
        reopened = true;
        store.close();
        ({ store, db, clock } = openStore(options, db));
        agrees();
      }
    });
    expect(reopened).toBe(true);
    expect(state()).toEqual({ dims: DIMS, trained_on: 132, bank: 1 });
    expect(count("SELECT count(*) AS n FROM memory_ivf WHERE list < 4096")).toBe(0);
    expect(count(`SELECT count(*) AS n FROM memory_ivf_entries WHERE key < ${4096 * 2 ** 40}`)).toBe(0);
    expect(count("SELECT count(*) AS n FROM memory_ivf_entries")).toBe(count(vectors));
    // Forgotten and erased: the row's entry goes with it (trigger).
    clock.advance(8 * 24 * 3600 * 1000);
    await fill(store, clock, 1);
    expect(count("SELECT count(*) AS n FROM memory_ivf_entries")).toBe(count(vectors));
  });

  it("trains by itself after the write that made it due, never inside it", async () => {
    const { store, db, clock } = openStore({ minVectors: 32, nprobe: 4 });
    const state = () => db.prepare("SELECT trained_on FROM memory_ivf_state").get();
    await fill(store, clock, 32);
    expect(state()).toBeUndefined();
    for (let i = 0; i < 100_000 && state() === undefined; i++) await new Promise((r) => setImmediate(r));
    expect(state()).toEqual({ trained_on: 32 });
    let more = true;
    for (let i = 0; i < 10_000 && more; i++) more = await store.maintainVectors();
    const unindexed = db.prepare("SELECT count(*) AS n FROM memories WHERE vector IS NOT NULL AND ivf_list IS NULL");
    expect(unindexed.get()).toEqual({ n: 0 });
    store.close();
  });

  it("finds a paraphrase through the index, with every filter applied inside the probe", async () => {
    // Every list probed: the index answers alone (no exact fallback), so its SQL must filter.
    const { store, clock } = openStore({ minVectors: 32, nprobe: 1000, background: false });
    await fill(store, clock, 60);
    while (await store.maintainVectors()) {}
    const add = async (text: string, extra: { kind?: string; owner?: string; tags?: string[] } = {}) => {
      clock.advance(1000);
      const { record } = await store.remember({
        kind: extra.kind ?? "fact",
        text,
        tags: extra.tags ?? [],
        owner: extra.owner ?? null,
        metadata: "{}",
      });
      return record;
    };
    const car = await add("The car needs servicing in May.", { owner: "ada", tags: ["garage"] });
    const coffee = await add("Bob drinks espresso.", { kind: "preference" });
    const old = await add("The vehicle repair shop closes at six.");
    // "automobile upkeep" shares no word with any memory: only the vector signal finds these.
    expect(await ids(store, "automobile upkeep")).toEqual([car.text, old.text]);
    expect(await ids(store, "automobile upkeep", { owner: "ada" })).toEqual([car.text]);
    expect(await ids(store, "automobile upkeep", { tags: ["garage"] })).toEqual([car.text]);
    expect(await ids(store, "automobile upkeep", { kinds: ["preference"] })).toEqual([]);
    expect(await ids(store, "coffee", { kinds: ["preference"] })).toEqual([coffee.text]);
    const beforeChanges = clock.now();

    clock.advance(1000);
    const newer = await store.supersede(old.id, { text: "The vehicle repair shop closes at seven." });
    expect(await ids(store, "automobile upkeep")).toEqual([car.text, newer.text]);
    expect(await ids(store, "automobile upkeep", { includeSuperseded: true })).toEqual(
      expect.arrayContaining([old.text, newer.text, car.text]),
    );
    clock.advance(1000);
    await store.forget(car.id);
    expect(await ids(store, "automobile upkeep")).toEqual([newer.text]);
    // As of before the supersede and the forget: the memories as they were.
    expect(await ids(store, "automobile upkeep", { asOf: beforeChanges })).toEqual([car.text, old.text]);

    // An update re-embeds: the old words' vector stays with the past row for as_of.
    clock.advance(1000);
    const changedAt = clock.now();
    await store.update(coffee.id, { kind: "preference", text: "Bob drinks tea." }, undefined);
    expect(await ids(store, "coffee", { kinds: ["preference"] })).toEqual([]);
    expect(await ids(store, "coffee", { kinds: ["preference"], asOf: changedAt - 1 })).toEqual([coffee.text]);
    expect(await ids(store, "coffee", { kinds: ["preference"], since: changedAt })).toEqual([]);
  });

  it("probes few lists and still finds what exact search finds", async () => {
    const { store, db, clock } = openStore({ minVectors: 200, nprobe: 8, background: false });
    await fill(store, clock, 600);
    while (await store.maintainVectors()) {}
    const index = new VectorIndex(db, new StatementCache(db), { nprobe: 8 });
    const exactIndex = new VectorIndex(db, new StatementCache(db), { nprobe: 1000 });
    const filter = sqlFilter({ includeSuperseded: false });
    let shared = 0;
    for (let i = 0; i < 20; i++) {
      const q = decodeVector(encodeVector(embedText(filler(i * 31))) as Buffer);
      const got = index.search(q, filter, 10);
      const truth = exactIndex.exact(q, filter, 10);
      expect(got).toHaveLength(10);
      shared += got.filter((s) => truth.includes(s)).length;
    }
    expect(shared / 200).toBeGreaterThanOrEqual(0.8);
  });

  it("migrates a file from before the entries table in place; its vectors get entries between writes", async () => {
    // fixtures/memory-ivf-v1.sqlite: trained by the engine before this layout (README there).
    const dir = mkdtempSync(join(tmpdir(), "prim-ivf-"));
    const path = join(dir, "memory.sqlite");
    copyFileSync(join(import.meta.dirname, "../fixtures/memory-ivf-v1.sqlite"), path);
    const { store, db } = openStore({ minVectors: 16, nprobe: 1000, background: false }, new Database(path));
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const exists = (name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
    const centroids = () => db.prepare("SELECT list, centroid FROM memory_ivf ORDER BY list").all();
    const trained = centroids();
    expect(trained).toHaveLength(16);
    expect(exists("memories_by_ivf")).toBe(false);
    expect(db.prepare("SELECT dims, trained_on, bank FROM memory_ivf_state").get()).toEqual({
      dims: DIMS,
      trained_on: 16,
      bank: 0,
    });
    // Every vector (a past row and a tombstone among them) waits for its entry; search is exact for them.
    const unindexed = "SELECT count(*) AS n FROM memories WHERE vector IS NOT NULL AND ivf_list IS NULL";
    expect(count(unindexed)).toBe(26);
    const before = 1_800_000_025_000; // printed by the script that made the file
    const filters = [
      sqlFilter({ includeSuperseded: false }),
      sqlFilter({ includeSuperseded: true }),
      sqlFilter({ includeSuperseded: false, tags: ["garage"] }),
      sqlFilter({ includeSuperseded: false, owner: "ada", kinds: ["preference"] }),
      sqlFilter({ includeSuperseded: false, asOf: before }),
    ];
    const queries = ["automobile upkeep", "espresso", "coffee beans", filler(3)].map(
      (t) => decodeVector(encodeVector(embedText(t)) as Buffer) as Float32Array,
    );
    expectIvfEqualsExact(db, filters, queries);
    expect(await ids(store, "automobile upkeep", { owner: "ada" })).toEqual(["The car needs servicing in May."]);
    expect(await ids(store, "espresso", { asOf: before })).toEqual([
      "Bob drinks espresso.",
      "Coffee beans are in the car.",
    ]);
    expect(await ids(store, "espresso")).toEqual([]); // forgotten, and changed to tea since
    while (await store.maintainVectors()) {}
    expect(count(unindexed)).toBe(0);
    expect(count("SELECT count(*) AS n FROM memory_ivf_entries")).toBe(26);
    expect(centroids()).toEqual(trained); // not trained again: the file's lists are kept
    expectIvfEqualsExact(db, filters, queries);
    store.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("k-means is deterministic and keeps centroids unit length", () => {
    const sample = Array.from({ length: 50 }, (_, i) =>
      Float32Array.from(decodeVector(encodeVector(embedText(filler(i))) as Buffer)),
    );
    const a = kMeans(sample, 5, 4);
    const b = kMeans(sample, 5, 4);
    expect(a.map((c) => [...c])).toEqual(b.map((c) => [...c]));
    for (const c of a) expect(Math.abs(c.reduce((s, x) => s + x * x, 0) - 1)).toBeLessThan(1e-4);
  });
});
