import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { describe, expect, it } from "vitest";
import { withMemory, withScopedMemory } from "./memory-helpers.js";

/** Every memory route, as [method, path, body]; `{id}` is a memory id. */
function routes(base: string, id: string): [string, string, unknown][] {
  return [
    ["POST", `${base}/memories`, { kind: "fact", text: "A new note." }],
    ["GET", `${base}/memories`, undefined],
    ["GET", `${base}/memories/${id}`, undefined],
    ["POST", `${base}/recall`, { query: "note" }],
    ["POST", `${base}/memories/${id}/supersede`, { text: "A newer note." }],
    ["POST", `${base}/consolidate`, {}],
    ["DELETE", `${base}/memories/${id}`, undefined],
  ];
}

describe("memory: tool allowlist", () => {
  it("maps remember, recall and forget tools onto their routes (403 tool_not_allowed otherwise)", async () => {
    const { as, call, remember, base } = await withScopedMemory();
    const expected: Record<string, string[]> = {
      memory_remember: ["POST /memories"],
      memory_recall: ["GET /memories", "GET /memories/{id}", "POST /recall"],
      memory_forget: ["POST /memories/{id}/supersede", "POST /consolidate", "DELETE /memories/{id}"],
    };
    for (const [tool, allowed] of Object.entries(expected)) {
      as([tool]);
      // A fresh memory per tool, so supersede and forget have something to act on.
      const id = (await remember({ kind: "fact", text: "A note to act on." })).body.id;
      for (const [method, path, body] of routes(base, id)) {
        const label = `${method} ${path.replace(base, "").replace(id, "{id}")}`;
        const res = await call(method, path, body);
        if (allowed.includes(label)) {
          expect(res.status, `${tool}: ${label}`).toBeLessThan(300);
        } else {
          expect(res.status, `${tool}: ${label}`).toBe(403);
          expect(res.body.error.code).toBe("tool_not_allowed");
        }
      }
    }
  });

  it("needs memory_recall for stats; a glob memory_* reaches everything", async () => {
    const { as, call, remember, base } = await withScopedMemory();
    await remember({ kind: "fact", text: "Kept." });
    as(["memory_remember", "memory_forget"]);
    expect((await call("GET", `${base}/stats`)).body.error.code).toBe("tool_not_allowed");
    as(["memory_recall"]);
    expect((await call("GET", `${base}/stats`)).body).toMatchObject({ type: "memory", items: 1 });
    as(["memory_*"]);
    const id = (await call("POST", `${base}/memories`, { kind: "fact", text: "By glob." })).body.id;
    for (const [method, path, body] of routes(base, id)) {
      expect((await call(method, path, body)).status, `${method} ${path}`).toBeLessThan(300);
    }
  });
});

describe("memory: type, pause and audit", () => {
  it("answers 400 wrong_type for memory routes on a kv primitive, and kv routes on a memory", async () => {
    const { engine, api, base } = await withMemory();
    const kv = await engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
      name: "cache",
      type: "kv",
      group: "app",
    });
    const res = await api("POST", `/v1/primitives/${kv.id}/recall`, { query: "x" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("wrong_type");
    expect(res.body.error.message).toContain("memory");
    const other = await api("GET", `${base}/keys/a`);
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe("wrong_type");
  });

  it("answers 423 paused on every memory route while paused; stats still work; resume restores", async () => {
    const { engine, api, base, memory, remember } = await withMemory();
    const id = (await remember({ kind: "fact", text: "Before the pause." })).body.id;
    await engine.services.catalog.updatePrimitive(memory.id, { paused: true });
    for (const [method, path, body] of routes(base, id)) {
      const res = await api(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(423);
      expect(res.body.error.code).toBe("paused");
    }
    expect((await api("GET", `${base}/stats`)).body).toMatchObject({ items: 1, paused: true });
    await engine.services.catalog.updatePrimitive(memory.id, { paused: false });
    expect((await api("GET", `${base}/memories/${id}`)).status).toBe(200);
  });

  it("accepts consolidate without a body", async () => {
    const { url, base } = await withMemory();
    const res = await fetch(`${url}${base}/consolidate`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ merged: 0, superseded: [] });
  });

  it("audits every call with the memory id as target, never texts or queries", async () => {
    const { engine, api, base, remember, recall } = await withMemory();
    const m = (await remember({ kind: "fact", text: "The vault code is do-not-log-this." })).body;
    await recall({ query: "vault code secret-query-words" });
    await api("GET", `${base}/memories/${m.id}`);
    const b = (await api("POST", `${base}/memories/${m.id}/supersede`, { text: "New do-not-log-this." })).body;
    await api("POST", `${base}/consolidate`, {});
    await api("DELETE", `${base}/memories/${b.id}`);
    await engine.services.audit.flush();
    const entries = await engine.services.catalog.listAudit({ group: "app", limit: 50 });
    const byAction = Object.fromEntries(entries.map((e) => [e.action, e]));
    expect(byAction["memory.remember"]).toMatchObject({ target: m.id, primitive: "memory", detail: { kind: "fact" } });
    expect(byAction["memory.recall"]).toMatchObject({ target: null, detail: { results: 1 } });
    expect(byAction["memory.get"]?.target).toBe(m.id);
    expect(byAction["memory.supersede"]).toMatchObject({ target: m.id, detail: { superseded_by: b.id } });
    expect(byAction["memory.consolidate"]?.detail).toEqual({ threshold: 0.8, merged: 0, superseded: 0 });
    expect(byAction["memory.forget"]?.target).toBe(b.id);
    const text = JSON.stringify(entries);
    expect(text).not.toContain("do-not-log-this");
    expect(text).not.toContain("secret-query-words");
  });
});
