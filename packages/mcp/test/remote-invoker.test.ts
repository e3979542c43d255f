// The remote Invoker and the engine's internal listener, over real HTTP and a real engine: the
// shared secret, errors that keep their codes end to end, bytes and streams on the wire, and a
// long poll that ends when its caller goes away. (The whole MCP tool suite also runs through
// the remote invoker against an engine process: helpers.ts `forEachInvoker`.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { type AnyOperation, Engine, LOCAL_PRINCIPAL, OPERATIONS, type OpContext, ServiceError } from "@prim/engine";
import { createInternalServer, listenInternal } from "@prim/http";
import { RemoteInvoker } from "@prim/wire/invoke";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";

const SECRET = "s".repeat(40);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/**
 * Operations that fail on purpose or echo their caller, beside the real ones: test-only, so
 * declared as plain operations (the definers take only names of the wire contract).
 */
const probe = (name: string, run: (ctx: OpContext) => unknown): AnyOperation => ({
  target: "none",
  name,
  audited: false,
  metered: false,
  access: "read",
  writesStorage: false,
  input: z.object({}),
  run,
});
const probes = [
  probe("test.whoami", (ctx) => ctx.principal),
  probe("test.busy", () => {
    throw new ServiceError("rate_limited", "slow down", { headers: { "retry-after": "7" } });
  }),
  probe("test.crash", () => {
    throw new Error("ENOENT: /var/secret/path/catalog.sqlite");
  }),
];

async function setup() {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-remote-"));
  const engine = Engine.openLocal({ dataDir, operations: [...OPERATIONS, ...probes] });
  const app = createInternalServer({ invoker: engine, secret: SECRET });
  const url = await listenInternal(app);
  cleanups.push(async () => {
    await app.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const remote = new RemoteInvoker({ url, secret: SECRET });
  await remote.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "g" });
  const create = (type: string, name: string) =>
    remote.invoke<{ id: string }>(LOCAL_PRINCIPAL, "primitive.create", null, { name, type, group: "g" });
  return { engine, app, url, remote, create };
}

/** Writes `bytes` as an object (a stream in) and reads it back (a Buffer or a stream out). */
async function putAndRead(remote: RemoteInvoker, storeId: string, bytes: Buffer) {
  const key = `object-${bytes.length}`;
  const body = Readable.from([bytes]);
  await remote.invoke(LOCAL_PRINCIPAL, "storage.put", storeId, { key, body, content_length: bytes.length });
  return remote.invoke<{ body: Readable | Buffer; info: { size: number } }>(LOCAL_PRINCIPAL, "storage.read", storeId, {
    key,
  });
}

describe("internal invoke listener", () => {
  it("binds to loopback by default and refuses a missing or wrong secret with 401 invalid_token", async () => {
    const { app, url } = await setup();
    expect((app.server.address() as { address: string }).address).toBe("127.0.0.1");
    const body = JSON.stringify({ principal: LOCAL_PRINCIPAL, op: "group.list", target: null, input: {}, meta: {} });
    for (const authorization of [undefined, "Bearer wrong", `Bearer ${SECRET}x`, SECRET]) {
      const res = await fetch(`${url}/internal/invoke`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body,
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_token");
    }
    const wrong = new RemoteInvoker({ url, secret: "not-the-secret" });
    await expect(wrong.invoke(LOCAL_PRINCIPAL, "group.list", null, {})).rejects.toMatchObject({
      code: "invalid_token",
      status: 401,
    });
    expect(() => createInternalServer({ invoker: {} as Engine, secret: "short" })).toThrow(/32 characters/);
    // A secret no Bearer header can carry (RFC 6750's token68) is refused at start, not on every call.
    expect(() => createInternalServer({ invoker: {} as Engine, secret: `${SECRET} !` })).toThrow(/token68/);
  });

  it("hands the engine the caller's principal whole, fields it does not know yet included", async () => {
    const { remote } = await setup();
    // Spread from the local principal: it carries whatever identifies the local workspace.
    const principal = {
      ...LOCAL_PRINCIPAL,
      kind: "scoped" as const,
      actor: "key:abc",
      groupId: "grp_1",
      tools: ["kv_*"],
      narrowed: [["kv_get"]],
      readOnly: true,
      unknownToThisVersion: "kept",
    };
    expect(await remote.invoke(principal, "test.whoami", null, {})).toEqual(principal);
  });

  it("keeps error codes, messages, statuses and headers end to end; unknown faults stay 500 without internals", async () => {
    const { remote, create } = await setup();
    const kv = await create("kv", "k");
    await expect(remote.invoke(LOCAL_PRINCIPAL, "kv.get", kv.id, { key: "absent" })).rejects.toMatchObject({
      code: "not_found",
      status: 404,
    });
    const scoped = { kind: "scoped" as const, workspace: "local", actor: "key:x", groupId: "grp_other", tools: null };
    await expect(remote.invoke(scoped, "group.get", "g", {})).rejects.toMatchObject({
      code: "group_mismatch",
      status: 403,
    });
    await expect(remote.invoke(LOCAL_PRINCIPAL, "test.busy", null, {})).rejects.toMatchObject({
      code: "rate_limited",
      message: "slow down",
      status: 429,
      headers: { "retry-after": "7" },
    });
    const crash = await remote.invoke(LOCAL_PRINCIPAL, "test.crash", null, {}).catch((err: unknown) => err);
    expect(crash).toBeInstanceOf(ServiceError);
    expect(crash).toMatchObject({ code: "internal_error", status: 500 });
    expect((crash as Error).message).not.toContain("/var/secret");
    // Nothing answering at all is 500 internal_error too, without the address.
    const gone = new RemoteInvoker({ url: "http://127.0.0.1:9", secret: SECRET });
    const down = await gone.invoke(LOCAL_PRINCIPAL, "group.list", null, {}).catch((err: unknown) => err);
    expect(down).toMatchObject({ code: "internal_error" });
    expect((down as Error).message).not.toContain("127.0.0.1");
  });

  it("carries bytes both ways: a stream in, a stream out, and user JSON that looks like a tag", async () => {
    const { remote, create } = await setup();
    const store = await create("storage", "s");
    // A small object's body is a Buffer, a larger one's a stream: either crosses as itself.
    const small = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const large = Buffer.concat(Array.from({ length: 2048 }, () => small)); // 512 KiB
    for (const bytes of [small, large]) {
      const read = await putAndRead(remote, store.id, bytes);
      expect(read.info.size).toBe(bytes.length);
      const chunks: Buffer[] = [];
      if (Buffer.isBuffer(read.body)) chunks.push(read.body);
      else for await (const chunk of read.body) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    }

    const kv = await create("kv", "k");
    const lookalike = { $prim: "buffer", base64: "AAAA", nested: [{ $prim: "stream" }] };
    await remote.invoke(LOCAL_PRINCIPAL, "kv.set", kv.id, { key: "x", value: lookalike });
    const got = await remote.invoke<{ value: unknown }>(LOCAL_PRINCIPAL, "kv.get", kv.id, { key: "x" });
    expect(got.value).toEqual(lookalike);
  });

  it("sends a read over 1 MiB as an omitted stream that refuses to be read (413), its size intact", async () => {
    const { remote, create } = await setup();
    const store = await create("storage", "s");
    const big = Buffer.alloc(1024 * 1024 + 1, 7);
    const read = await putAndRead(remote, store.id, big);
    expect(read.info.size).toBe(big.length);
    const drained = (async () => {
      for await (const _ of read.body);
    })();
    await expect(drained).rejects.toMatchObject({ code: "payload_too_large" });
  });

  it("ends the engine's long poll when the caller aborts, so the next job goes to the next receiver", async () => {
    const { engine, remote, create } = await setup();
    const q = await create("queue", "q");
    // The queue primitive's handle (engine-internal, not exported): its long-poll waiters.
    const { waiters } = engine.services.files.handle(q.id, "queue").store as {
      waiters: { parked(queue: string): number };
    };
    const parked = (n: number) =>
      vi.waitFor(() => expect(waiters.parked("jobs")).toBe(n), { timeout: 10_000, interval: 5 });
    const abort = new AbortController();
    const waiting = remote
      .invoke(LOCAL_PRINCIPAL, "queue.receive", q.id, { queue: "jobs", wait: "10s" }, { signal: abort.signal })
      .catch((err: unknown) => err);
    await parked(1);
    abort.abort();
    expect(await waiting).toMatchObject({ name: "AbortError" });
    await parked(0);
    // Had the aborted receive kept waiting in the engine, it would take this job.
    await remote.invoke(LOCAL_PRINCIPAL, "queue.send", q.id, { queue: "jobs", body: { n: 1 } });
    const next = await remote.invoke<{ data: unknown[] }>(LOCAL_PRINCIPAL, "queue.receive", q.id, { queue: "jobs" });
    expect(next.data).toHaveLength(1);
  });
});
