import { LOCAL_PRINCIPAL, type Principal } from "@prim/engine";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it, vi } from "vitest";

/**
 * Change feeds over REST: `GET /v1/primitives/{id}/changes` and `GET /v1/groups/{group}/changes`
 * (JSON pages, long poll, SSE with Last-Event-ID), their cursors and their scoping.
 */

const scoped = (groupId: string): Principal => ({
  kind: "scoped",
  workspace: "local",
  actor: "key:key_a",
  groupId,
  tools: null,
});

async function world(engineOptions = {}) {
  let groupA = "";
  const server = await startServer({
    engineOptions,
    authenticate: (req) => (req.headers.authorization === "Bearer a" ? scoped(groupA) : LOCAL_PRINCIPAL),
  });
  groupA = (await server.api("POST", "/v1/groups", { name: "a" })).body.id;
  await server.api("POST", "/v1/groups", { name: "b" });
  const make = async (name: string, type: string, group: string) =>
    (await server.api("POST", "/v1/primitives", { name, type, group })).body.id as string;
  return { server, make };
}

/** Reads an SSE answer until `n` change events arrived, then closes it. */
async function events(url: string, headers: Record<string, string>, n: number) {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  const got: { id: string; data: { key: string } }[] = [];
  while (got.length < n) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let end = text.indexOf("\n\n");
    while (end >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id !== undefined && data !== undefined && /^event: change$/m.test(block)) {
        got.push({ id, data: JSON.parse(data) });
      }
      end = text.indexOf("\n\n");
    }
  }
  controller.abort();
  return got.slice(0, n);
}

describe("change feeds over REST", () => {
  it("lists a primitive's changes in order, resumes from a cursor and refuses forged cursors", async () => {
    const { server, make } = await world();
    const kv = await make("cache", "kv", "a");
    for (const key of ["x", "y", "z"]) await server.api("PUT", `/v1/primitives/${kv}/keys/${key}`, { value: "v" });
    const page = await server.api("GET", `/v1/primitives/${kv}/changes?limit=2`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((e: { op: string; key: string }) => `${e.op} ${e.key}`)).toEqual(["set x", "set y"]);
    expect(page.body.data[0]).not.toHaveProperty("value");
    const rest = await server.api("GET", `/v1/primitives/${kv}/changes?after=${page.body.cursor}`);
    expect(rest.body.data.map((e: { key: string }) => e.key)).toEqual(["z"]);
    const forged = await server.api("GET", `/v1/primitives/${kv}/changes?after=${rest.body.cursor.slice(0, -2)}AA`);
    expect(forged.status).toBe(400);
    expect(forged.body.error.code).toBe("invalid_request");
  });

  it("wakes a long poll when a write commits", async () => {
    const { server, make } = await world();
    const kv = await make("cache", "kv", "a");
    const start = (await server.api("GET", `/v1/primitives/${kv}/changes`)).body.cursor;
    const parked = server.api("GET", `/v1/primitives/${kv}/changes?after=${start}&wait=30s`);
    const signals = server.engine.services.files.changeSignals;
    await vi.waitFor(() => expect(signals.waiting).toBe(1), { timeout: 10_000, interval: 5 });
    await server.api("PUT", `/v1/primitives/${kv}/keys/woke`, { value: 1 });
    const got = await parked;
    expect(got.body.data.map((e: { key: string }) => e.key)).toEqual(["woke"]);
  });

  it("answers 409 conflict past the retention window, naming the oldest cursor still held", async () => {
    const { server, make } = await world({ changeLog: { maxEntries: 2 } });
    const kv = await make("cache", "kv", "a");
    const early = (await server.api("GET", `/v1/primitives/${kv}/changes`)).body.cursor;
    for (const key of ["a", "b", "c", "d"]) await server.api("PUT", `/v1/primitives/${kv}/keys/${key}`, { value: 1 });
    server.clock.advance(61_000); // the next write compacts
    await server.api("PUT", `/v1/primitives/${kv}/keys/e`, { value: 1 });
    const gone = await server.api("GET", `/v1/primitives/${kv}/changes?after=${early}`);
    expect(gone.status).toBe(409);
    expect(gone.body.error.code).toBe("conflict");
    const held = /oldest cursor still held is '([^']+)'/.exec(gone.body.error.message)?.[1];
    const resumed = await server.api("GET", `/v1/primitives/${kv}/changes?after=${held}`);
    expect(resumed.body.data.map((e: { key: string }) => e.key)).toEqual(["d", "e"]);
  });

  it("merges a group's primitives, each in commit order, with a group cursor", async () => {
    const { server, make } = await world();
    const kv = await make("cache", "kv", "a");
    const st = await make("bucket", "storage", "a");
    const other = await make("elsewhere", "kv", "b");
    await server.api("PUT", `/v1/primitives/${kv}/keys/k1`, { value: 1 });
    await server.api("PUT", `/v1/primitives/${st}/objects/o1`, "bytes", { "content-type": "text/plain" });
    server.clock.advance(1);
    await server.api("PUT", `/v1/primitives/${kv}/keys/k2`, { value: 1 });
    await server.api("PUT", `/v1/primitives/${other}/keys/not-a`, { value: 1 });
    const first = await server.api("GET", "/v1/groups/a/changes?limit=2");
    expect(first.status).toBe(200);
    const label = (e: { primitive: string; key: string }) => `${e.primitive === kv ? "kv" : "st"}:${e.key}`;
    expect(first.body.data.map(label)).toEqual(["kv:k1", "st:o1"]);
    await server.api("DELETE", `/v1/primitives/${st}/objects/o1`);
    const next = await server.api("GET", `/v1/groups/a/changes?after=${first.body.cursor}`);
    expect(next.body.data.map(label)).toEqual(["kv:k2", "st:o1"]);
    expect(next.body.data.map((e: { op: string }) => e.op)).toEqual(["set", "delete"]);
    // A primitive cursor is not a group cursor, and another group's cursor is refused.
    const wrong = await server.api("GET", `/v1/groups/a/changes?after=${next.body.data[0].cursor.slice(0, 8)}`);
    expect(wrong.status).toBe(400);
    const bCursor = (await server.api("GET", "/v1/groups/b/changes")).body.cursor;
    expect((await server.api("GET", `/v1/groups/a/changes?after=${bCursor}`)).status).toBe(400);
  });

  it("streams Server-Sent Events and resumes from Last-Event-ID", async () => {
    const { server, make } = await world();
    const kv = await make("cache", "kv", "a");
    for (const key of ["e1", "e2", "e3"]) await server.api("PUT", `/v1/primitives/${kv}/keys/${key}`, { value: 1 });
    const url = `${server.url}/v1/primitives/${kv}/changes`;
    const first = await events(url, server.auth, 2);
    expect(first.map((e) => e.data.key)).toEqual(["e1", "e2"]);
    const resumed = await events(url, { ...server.auth, "last-event-id": first[0]?.id as string }, 2);
    expect(resumed.map((e) => e.data.key)).toEqual(["e2", "e3"]);
    // A write while the stream waits arrives as the next event.
    const live = events(url, { ...server.auth, "last-event-id": resumed[1]?.id as string }, 1);
    await vi.waitFor(() => expect(server.engine.services.files.changeSignals.waiting).toBe(1), {
      timeout: 10_000,
      interval: 5,
    });
    await server.api("PUT", `/v1/primitives/${kv}/keys/e4`, { value: 1 });
    expect((await live).map((e) => e.data.key)).toEqual(["e4"]);
    // A bad cursor is an ordinary JSON error before any stream opens.
    const bad = await fetch(url, { headers: { ...server.auth, accept: "text/event-stream", "last-event-id": "nope" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
  });

  it("scopes feeds: a key for group a reads a's feeds, never b's", async () => {
    const { server, make } = await world();
    const mine = await make("cache", "kv", "a");
    const theirs = await make("cache", "kv", "b");
    await server.api("PUT", `/v1/primitives/${mine}/keys/mine`, { value: 1 });
    await server.api("PUT", `/v1/primitives/${theirs}/keys/theirs`, { value: 1 });
    const a = { authorization: "Bearer a" };
    const own = await server.api("GET", `/v1/primitives/${mine}/changes`, undefined, a);
    expect(own.status).toBe(200);
    expect(own.body.data.map((e: { key: string }) => e.key)).toEqual(["mine"]);
    const ownGroup = await server.api("GET", "/v1/groups/a/changes", undefined, a);
    expect(ownGroup.body.data.map((e: { key: string }) => e.key)).toEqual(["mine"]);
    const other = await server.api("GET", `/v1/primitives/${theirs}/changes`, undefined, a);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("not_found");
    const otherGroup = await server.api("GET", "/v1/groups/b/changes", undefined, a);
    expect(otherGroup.status).toBe(403);
    expect(otherGroup.body.error.code).toBe("group_mismatch");
    expect(JSON.stringify([other.body, otherGroup.body])).not.toContain("theirs");
  });
});
