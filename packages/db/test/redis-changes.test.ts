// RedisChanges: change notices published by one process's feed reach the listeners another
// process subscribed, by workspace, through the machine's Redis.
import { randomBytes } from "node:crypto";
import type { ChangeNotice } from "@prim/wire";
import { afterAll, describe, expect, it } from "vitest";
import { RedisChanges } from "../src/index.js";

const cell = new RedisChanges("redis://127.0.0.1:6379"); // the publishing side (apps/api)
const mcp = new RedisChanges("redis://127.0.0.1:6379"); // the listening side (apps/mcp)

afterAll(async () => {
  await cell.close();
  await mcp.close();
});

/** A fresh workspace id: Redis is shared with every other suite. */
const workspaceId = () => `ws_${randomBytes(6).toString("hex")}`;

/** Collects notices; `next()` waits for the next one. */
function collector() {
  const seen: ChangeNotice[] = [];
  let wake: (() => void) | undefined;
  const listener = (n: ChangeNotice) => {
    seen.push(n);
    wake?.();
  };
  const next = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => (seen.length >= count ? resolve() : undefined);
      wake = check;
      check();
    });
  return { seen, listener, next };
}

describe("RedisChanges", () => {
  it("delivers another process's notices of a subscribed workspace only, until unsubscribed", async () => {
    const ws = workspaceId();
    const other = workspaceId();
    const mine = collector();
    const theirs = collector();
    const stop = await mcp.subscribe(ws, mine.listener);
    await mcp.subscribe(other, theirs.listener);
    const notice = (path: string, workspace = ws): ChangeNotice => ({
      workspace,
      primitive: "01jprimitive",
      type: "fs",
      path,
    });
    cell.publish(notice("/a.txt"));
    cell.publish({ ...notice("/dir"), subtree: true });
    await mine.next(2);
    expect(mine.seen).toEqual([notice("/a.txt"), { ...notice("/dir"), subtree: true }]);

    // Unsubscribed: a notice of ws, then one of `other`, brings only the latter (Redis keeps order).
    stop();
    cell.publish(notice("/after"));
    cell.publish(notice("/b", other));
    await theirs.next(1);
    expect(theirs.seen).toEqual([notice("/b", other)]);
    expect(mine.seen).toHaveLength(2);
  });

  it("shares one subscription between listeners of a workspace", async () => {
    const ws = workspaceId();
    const a = collector();
    const b = collector();
    const stopA = await mcp.subscribe(ws, a.listener);
    await mcp.subscribe(ws, b.listener);
    stopA();
    cell.publish({ workspace: ws, primitive: "p", type: "storage", path: "k" });
    await b.next(1);
    expect(b.seen).toEqual([{ workspace: ws, primitive: "p", type: "storage", path: "k" }]);
    expect(a.seen).toEqual([]);
  });

  it("never fails a publish when Redis is away; a subscribe says so", async () => {
    const away = new RedisChanges("redis://127.0.0.1:1");
    try {
      expect(() => away.publish({ workspace: "w", primitive: "p", type: "fs", path: "/x" })).not.toThrow();
      await expect(away.subscribe("w", () => {})).rejects.toThrow();
    } finally {
      await away.close();
    }
  });
});
