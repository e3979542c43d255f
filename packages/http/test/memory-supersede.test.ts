import { describe, expect, it } from "vitest";
import { withMemory } from "./memory-helpers.js";

async function chain() {
  const server = await withMemory();
  const { remember, api, base } = server;
  const a = (
    await remember({
      kind: "fact",
      text: "The team standup is at 9:30 in the small meeting room.",
      tags: ["team", "meetings"],
      owner: "alice",
      metadata: { source: "wiki" },
    })
  ).body;
  server.clock.advance(1000);
  const supersede = (id: string, body: Record<string, unknown>) =>
    api("POST", `${base}/memories/${id}/supersede`, body);
  return { ...server, a, supersede, get: (id: string) => api("GET", `${base}/memories/${id}`) };
}

describe("memory: supersede", () => {
  it("creates a new memory (201) that inherits kind, tags, metadata and owner, linked both ways", async () => {
    const { a, supersede, get, clock } = await chain();
    const res = await supersede(a.id, { text: "The team standup moved to 10:00, still in the small meeting room." });
    expect(res.status).toBe(201);
    const b = res.body;
    expect(b).toMatchObject({
      kind: "fact",
      tags: ["team", "meetings"],
      owner: "alice",
      metadata: { source: "wiki" },
      supersedes: [a.id],
      superseded_by: null,
      created_at: clock.now(),
    });
    expect(b.id).not.toBe(a.id);
    const old = (await get(a.id)).body;
    expect(old).toMatchObject({ text: a.text, superseded_by: b.id, supersedes: [], updated_at: clock.now() });
    expect(old.created_at).toBe(a.created_at);
  });

  it("takes kind, tags and metadata from the body when given", async () => {
    const { a, supersede } = await chain();
    const res = await supersede(a.id, {
      text: "Standup is cancelled this week.",
      kind: "episode",
      tags: ["standup"],
      metadata: { source: "slack" },
    });
    expect(res.body).toMatchObject({
      kind: "episode",
      tags: ["standup"],
      metadata: { source: "slack" },
      owner: "alice",
    });
  });

  it("builds a chain A→B→C; superseding a superseded memory is 409 conflict naming its successor", async () => {
    const { a, supersede, get } = await chain();
    const b = (await supersede(a.id, { text: "Standup at 10:00." })).body;
    const c = (await supersede(b.id, { text: "Standup at 10:15." })).body;
    expect((await get(a.id)).body).toMatchObject({ superseded_by: b.id, supersedes: [] });
    expect((await get(b.id)).body).toMatchObject({ superseded_by: c.id, supersedes: [a.id] });
    expect((await get(c.id)).body).toMatchObject({ superseded_by: null, supersedes: [b.id] });
    for (const id of [a.id, b.id]) {
      const res = await supersede(id, { text: "Standup at 11:00." });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("conflict");
      expect(res.body.error.message).toContain("already superseded by");
    }
  });

  it("excludes superseded memories from recall unless include_superseded, and from stats", async () => {
    const { a, supersede, recall, api, base } = await chain();
    const b = (await supersede(a.id, { text: "The team standup moved to 10:00 in the large meeting room." })).body;
    const ids = async (body: Record<string, unknown>) =>
      (await recall(body)).body.data.map((m: { id: string }) => m.id).sort();
    expect(await ids({ query: "team standup meeting room" })).toEqual([b.id]);
    expect(await ids({ query: "team standup meeting room", include_superseded: true })).toEqual([a.id, b.id].sort());
    expect((await api("GET", `${base}/stats`)).body.items).toBe(1);
    // The listing shows both, with their links.
    const listed = (await api("GET", `${base}/memories`)).body.data;
    expect(listed.map((m: { id: string }) => m.id)).toEqual([b.id, a.id]);
    expect(listed[1].superseded_by).toBe(b.id);
  });

  it("answers 404 for an unknown memory and 400/413 for a bad body", async () => {
    const { a, supersede } = await chain();
    const missing = await supersede("mem_00000000000000000000000000", { text: "x" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const owner = await supersede(a.id, { text: "x", owner: "bob" });
    expect(owner.status).toBe(400);
    expect(owner.body.error.message).toBe("unknown field: owner");
    expect((await supersede(a.id, {})).body.error.message).toBe("text: required");
    const big = await supersede(a.id, { text: "x".repeat(32 * 1024 + 1) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("payload_too_large");
  });
});

describe("memory: forget inside a chain", () => {
  it("splices a forgotten middle memory: A now points to C and C to A", async () => {
    const { a, supersede, get, api, base } = await chain();
    const b = (await supersede(a.id, { text: "Standup at 10:00." })).body;
    const c = (await supersede(b.id, { text: "Standup at 10:15." })).body;
    expect((await api("DELETE", `${base}/memories/${b.id}`)).status).toBe(200);
    expect((await get(a.id)).body).toMatchObject({ superseded_by: c.id });
    expect((await get(c.id)).body).toMatchObject({ supersedes: [a.id] });
  });

  it("keeps older versions superseded when the newest is forgotten (they do not come back)", async () => {
    const { a, supersede, get, api, base, recall } = await chain();
    const b = (await supersede(a.id, { text: "The team standup moved to 10:00 in the small meeting room." })).body;
    await api("DELETE", `${base}/memories/${b.id}`);
    expect((await get(a.id)).body.superseded_by).toBe(b.id);
    expect((await recall({ query: "team standup" })).body.data).toEqual([]);
    expect((await api("GET", `${base}/stats`)).body.items).toBe(0);
  });
});
