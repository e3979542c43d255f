import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MEMORY_FIELDS, withMemory } from "./memory-helpers.js";

describe("memory: remember and get", () => {
  it("answers 201 with the whole record, and get returns the same record", async () => {
    const { remember, api, base, clock } = await withMemory();
    const res = await remember({
      kind: "preference",
      text: "Alice prefers dark mode in her editor.",
      tags: ["ui", "editor", "ui"],
      owner: "alice",
      metadata: { source: "chat", turn: 12 },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(MEMORY_FIELDS);
    expect(res.body).toMatchObject({
      kind: "preference",
      text: "Alice prefers dark mode in her editor.",
      tags: ["ui", "editor"], // duplicates dropped, order kept
      owner: "alice",
      metadata: { source: "chat", turn: 12 },
      created_at: clock.now(),
      updated_at: clock.now(),
      superseded_by: null,
      supersedes: [],
    });
    expect(res.body.id).toMatch(/^mem_[0-9a-hjkmnp-tv-z]{26}$/);
    const got = await api("GET", `${base}/memories/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it("defaults tags to [], owner to null and metadata to {}", async () => {
    const { remember } = await withMemory();
    const res = await remember({ kind: "fact", text: "The staging cluster is rebuilt on Sundays." });
    expect(res.body).toMatchObject({ tags: [], owner: null, metadata: {} });
  });

  it("answers 404 not_found for an unknown id, naming it", async () => {
    const { api, base } = await withMemory();
    for (const id of ["mem_00000000000000000000000000", "nope"]) {
      const res = await api("GET", `${base}/memories/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: "not_found", message: `memory '${id}' not found` });
    }
  });

  it("answers 400 invalid_request naming the field for missing, blank or unknown fields", async () => {
    const { api, base } = await withMemory();
    const cases: [unknown, string][] = [
      [{ text: "x" }, "kind: required"],
      [{ kind: "fact" }, "text: required"],
      [{ kind: "fact", text: "   " }, "text: must not be blank"],
      [{ kind: "", text: "x" }, "kind: must not be empty"],
      [{ kind: "fact", text: "x", tags: "a" }, "tags:"],
      [{ kind: "fact", text: "x", tags: [""] }, "tags[0]: must not be empty"],
      [{ kind: "fact", text: "x", owner: "bad\nowner" }, "owner: must not contain control characters"],
      [{ kind: "fact", text: "x", metadata: [1] }, "metadata:"],
      [{ kind: "fact", text: "x", colour: "red" }, "unknown field: colour"],
      [{ kind: "k".repeat(65), text: "x" }, "kind: must be at most 64 characters"],
    ];
    for (const [body, message] of cases) {
      const res = await api("POST", `${base}/memories`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toContain(message);
    }
  });
});

describe("memory: limits", () => {
  it("accepts a 32 KiB text and answers 413 payload_too_large one byte over", async () => {
    const { remember } = await withMemory();
    expect((await remember({ kind: "note", text: "a".repeat(32 * 1024) })).status).toBe(201);
    const over = await remember({ kind: "note", text: `${"a".repeat(32 * 1024 - 1)}é` });
    expect(over.status).toBe(413);
    expect(over.body.error).toEqual({
      code: "payload_too_large",
      message: "text: text is 32769 bytes; the limit is 32768",
    });
  });

  it("accepts 32 distinct tags and answers 400 for 33", async () => {
    const { remember } = await withMemory();
    const tags = Array.from({ length: 33 }, (_, i) => `t${i}`);
    expect((await remember({ kind: "note", text: "x", tags: tags.slice(0, 32) })).status).toBe(201);
    // Duplicates do not count against the limit.
    expect((await remember({ kind: "note", text: "x", tags: [...tags.slice(0, 32), "t0"] })).status).toBe(201);
    const over = await remember({ kind: "note", text: "x", tags });
    expect(over.status).toBe(400);
    expect(over.body.error).toEqual({ code: "invalid_request", message: "tags: at most 32 distinct tags" });
    const long = await remember({ kind: "note", text: "x", tags: ["x".repeat(65)] });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toBe("tags[0]: must be at most 64 characters");
  });

  it("answers 413 for metadata over 16 KiB of JSON", async () => {
    const { remember } = await withMemory();
    expect((await remember({ kind: "note", text: "x", metadata: { blob: "m".repeat(16_000) } })).status).toBe(201);
    const over = await remember({ kind: "note", text: "x", metadata: { blob: "m".repeat(16 * 1024) } });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe("payload_too_large");
    expect(over.body.error.message).toMatch(/^metadata: metadata is \d+ bytes of JSON; the limit is 16384$/);
  });
});

describe("memory: list", () => {
  async function seeded() {
    const server = await withMemory();
    const ids: Record<string, string> = {};
    const rows: [string, string, string[], string | undefined, string][] = [
      ["a", "fact", ["work"], "alice", "Alice works on the billing service."],
      ["b", "preference", ["ui"], "alice", "Alice prefers dark mode."],
      ["c", "fact", ["work", "infra"], "bob", "Bob owns the Kubernetes cluster."],
      ["d", "episode", [], undefined, "The team met on Monday."],
      ["e", "fact", ["infra"], undefined, "Deploys go through Argo CD."],
    ];
    for (const [name, kind, tags, owner, text] of rows) {
      ids[name] = (await server.remember({ kind, text, tags, ...(owner ? { owner } : {}) })).body.id;
    }
    const list = async (query = "") => {
      const res = await server.api("GET", `${server.base}/memories${query}`);
      expect(res.status, query).toBe(200);
      return res.body as { data: { id: string }[]; next_cursor: string | null };
    };
    const names = (page: { data: { id: string }[] }) =>
      page.data.map((m) => Object.entries(ids).find(([, id]) => id === m.id)?.[0]);
    return { ...server, ids, list, names };
  }

  it("lists newest first with full records", async () => {
    const { list, names } = await seeded();
    const page = await list();
    expect(names(page)).toEqual(["e", "d", "c", "b", "a"]);
    expect(page.next_cursor).toBeNull();
    expect(Object.keys(page.data[0] as object).sort()).toEqual(MEMORY_FIELDS);
  });

  it("filters by kind, tag and owner, alone and combined", async () => {
    const { list, names } = await seeded();
    expect(names(await list("?kind=fact"))).toEqual(["e", "c", "a"]);
    expect(names(await list("?tag=infra"))).toEqual(["e", "c"]);
    expect(names(await list("?owner=alice"))).toEqual(["b", "a"]);
    expect(names(await list("?kind=fact&tag=work"))).toEqual(["c", "a"]);
    expect(names(await list("?kind=fact&tag=work&owner=bob"))).toEqual(["c"]);
    expect(names(await list("?kind=decision"))).toEqual([]);
  });

  it("pages with an opaque cursor, filters kept across pages", async () => {
    const { list, names } = await seeded();
    const first = await list("?limit=2");
    expect(names(first)).toEqual(["e", "d"]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await list(`?limit=2&cursor=${first.next_cursor}`);
    expect(names(second)).toEqual(["c", "b"]);
    const third = await list(`?limit=2&cursor=${second.next_cursor}`);
    expect(names(third)).toEqual(["a"]);
    expect(third.next_cursor).toBeNull();
    const factsFirst = await list("?kind=fact&limit=1");
    const factsNext = await list(`?kind=fact&limit=5&cursor=${factsFirst.next_cursor}`);
    expect(names(factsNext)).toEqual(["c", "a"]);
  });

  it("answers 400 for a bad limit, a forged cursor or an unknown filter", async () => {
    const { api, base } = await seeded();
    for (const query of ["?limit=0", "?limit=201", "?limit=x", "?cursor=zzz", "?status=live"]) {
      const res = await api("GET", `${base}/memories${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
  });
});

describe("memory: forget", () => {
  it("deletes for good: gone from get, list, recall and stats; a second forget is 404", async () => {
    const { remember, api, base, recall } = await withMemory();
    const keep = (await remember({ kind: "fact", text: "The billing database is PostgreSQL." })).body;
    const gone = (await remember({ kind: "fact", text: "The wifi password of the office is swordfish." })).body;
    expect((await recall({ query: "office wifi password" })).body.data.map((m: any) => m.id)).toContain(gone.id);

    const res = await api("DELETE", `${base}/memories/${gone.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: gone.id, deleted: true });

    expect((await api("GET", `${base}/memories/${gone.id}`)).status).toBe(404);
    expect((await api("GET", `${base}/memories`)).body.data.map((m: any) => m.id)).toEqual([keep.id]);
    expect((await recall({ query: "office wifi password swordfish" })).body.data).toEqual([]);
    expect((await api("GET", `${base}/stats`)).body.items).toBe(1);
    const again = await api("DELETE", `${base}/memories/${gone.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toEqual({ code: "not_found", message: `memory '${gone.id}' not found` });
  });

  it("removes the forgotten text from the file, not only from the index, once its tombstone expires", async () => {
    const { remember, api, base, engine, memory, clock } = await withMemory();
    const secret = "zanzibar-quokka-4711";
    const m = (await remember({ kind: "fact", text: `The door code is ${secret}.` })).body;
    // Checkpoints the WAL into the file, then reads the file's bytes.
    const fileBytes = () => {
      engine.services.files.handle(memory.id, "memory").db?.pragma("wal_checkpoint(TRUNCATE)");
      return readFileSync(engine.services.files.path(memory.id));
    };
    // The words too: the FTS index and the vocabulary hold them apart from the text.
    const needles = [secret, "zanzibar", "quokka"].map((s) => Buffer.from(s));
    expect(needles.map((n) => fileBytes().includes(n))).toEqual([true, true, true]);
    await api("DELETE", `${base}/memories/${m.id}`);
    // A tombstone for 7 days (history, as_of recall); the next write after that erases it.
    expect(needles.map((n) => fileBytes().includes(n))).toEqual([true, true, true]);
    clock.advance(7 * 86_400_000);
    await remember({ kind: "fact", text: "Something else entirely." });
    expect(needles.map((n) => fileBytes().includes(n))).toEqual([false, false, false]);
  });
});
