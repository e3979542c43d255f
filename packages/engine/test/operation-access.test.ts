// What each operation does, read or write, written out once (CLOUD.md, "Credentials": read-only
// is decided in `engine.invoke` from each operation's declaration): every operation of the
// registry must be listed here exactly as its `access` says, so a new operation cannot slip in as
// a read that a read-only credential or the consent screen's read-only preset would
// let through. @prim/mcp's tools-access test derives each tool's Read/Write from these.
import type { OperationName } from "@prim/wire";
import { OPERATION_NAMES } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { accessOf, mayWrite } from "../src/primitives/operation.js";
import { OPERATIONS } from "../src/registry.js";

/**
 * "write": changes data, a primitive's or group's settings, a job's lease or subscription, a
 * signed URL's epoch, or acts outside with a secret (vault.fetch). "write: PUT only": decided by
 * the input (a signed URL for PUT uploads; GET and HEAD read). db.query is "read": a statement
 * there writes only with the `db_exec` grant (a write tool); db.exec and db.batch are the write
 * doors, "write: a writing statement": a SELECT through `/exec` reads, a batch holding one
 * writing statement writes.
 */
type Class = "read" | "write" | "write: PUT only" | "write: a writing statement";

const ACCESS: Record<OperationName, Class> = {
  "group.create": "write",
  "group.list": "read",
  "group.get": "read",
  "group.delete": "write",
  "group.find": "read",
  "primitive.resolve": "read",
  "primitive.create": "write",
  "primitive.list": "read",
  "primitive.get": "read",
  "primitive.update": "write",
  "primitive.delete": "write",
  "primitive.stats": "read",
  "primitive.export": "read",
  "primitive.snapshot": "write",
  "primitive.snapshots": "read",
  "primitive.restore": "write",
  "primitive.fork": "write",
  "primitive.pause": "write",
  "primitive.resume": "write",
  "group.export": "read",
  "group.import": "write",
  "group.import_status": "read",
  "auth.whoami": "read",
  "audit.list": "read",
  "audit.group": "read",
  "audit.primitive": "read",
  "changes.read": "read",
  "changes.group": "read",
  "kv.list": "read",
  "kv.get": "read",
  "kv.set": "write",
  "kv.delete": "write",
  "kv.mget": "read",
  "kv.mset": "write",
  "kv.mdelete": "write",
  "kv.incr": "write",
  "db.query": "read",
  "db.exec": "write: a writing statement",
  "db.batch": "write: a writing statement",
  "db.tables": "read",
  "db.table": "read",
  "db.branch.create": "write",
  "db.branch.list": "read",
  "db.branch.promote": "write",
  "db.branch.delete": "write",
  "storage.list": "read",
  "storage.read": "read",
  "storage.put": "write",
  "storage.delete": "write",
  "storage.copy": "write",
  "storage.presign": "write: PUT only",
  "storage.revoke": "write",
  "storage.signed": "write: PUT only",
  "fs.read": "read",
  "fs.write": "write",
  "fs.delete": "write",
  "fs.mkdir": "write",
  "fs.move": "write",
  "fs.glob": "read",
  "fs.search": "read",
  "fs.fork": "write",
  "queue.send": "write",
  "queue.receive": "write",
  "queue.ack": "write",
  "queue.heartbeat": "write",
  "queue.requeue": "write",
  "queue.purge": "write",
  "queue.queues": "read",
  "queue.messages": "read",
  "queue.get": "read",
  "queue.subscribe": "write",
  "queue.unsubscribe": "write",
  "queue.publish": "write",
  "queue.send_batch": "write",
  "queue.ack_batch": "write",
  "queue.publish_batch": "write",
  "memory.remember": "write",
  "memory.list": "read",
  "memory.get": "read",
  "memory.forget": "write",
  "memory.supersede": "write",
  "memory.recall": "read",
  "memory.consolidate": "write",
  "memory.history": "read",
  "vault.put": "write",
  "vault.delete": "write",
  "vault.list": "read",
  "vault.grant": "write",
  "vault.grants": "read",
  "vault.revoke": "write",
  "vault.fetch": "write",
  "vault.request": "write",
  "vault.request_get": "read",
  "vault.request_fulfil": "write",
  "vault.request_decline": "write",
  "vault.requests": "read",
};

/** An operation's access as its declaration says it. */
function declared(op: (typeof OPERATIONS)[number]): Class | "?" {
  if (typeof op.access !== "function") return op.access;
  if (op.name.startsWith("db.")) {
    const insert = "INSERT INTO t VALUES (1)";
    const writes = [{ sql: insert }, { statements: [{ sql: "SELECT 1" }, { sql: insert }] }];
    const reads = [
      { sql: "SELECT 1" },
      { sql: "WITH a AS (SELECT 1) SELECT * FROM a" },
      { statements: [{ sql: "SELECT 1" }] },
    ];
    const ok = writes.every((i) => accessOf(op, i) === "write") && reads.every((i) => accessOf(op, i) === "read");
    return ok && accessOf(op, {}) === "write" ? "write: a writing statement" : "?";
  }
  const put = accessOf(op, { method: "PUT" });
  return put === "write" && accessOf(op, { method: "GET" }) === "read" ? "write: PUT only" : "?";
}

describe("read and write", () => {
  it("classifies every operation exactly as its declaration says", () => {
    expect(OPERATIONS.map((op) => op.name).sort()).toEqual([...OPERATION_NAMES].sort());
    expect(Object.fromEntries(OPERATIONS.map((op) => [op.name, declared(op)]))).toEqual(ACCESS);
  });

  it("a signed URL writes only for PUT: HEAD and GET read", () => {
    for (const name of ["storage.presign", "storage.signed"]) {
      const op = OPERATIONS.find((o) => o.name === name);
      if (op === undefined) throw new Error(`no ${name}`);
      expect(
        ["PUT", "GET", "HEAD"].map((method) => accessOf(op, { method })),
        name,
      ).toEqual(["write", "read", "read"]);
      expect(mayWrite(op), name).toBe(true);
    }
  });

  it("db.exec and db.batch write when a statement may: SELECTs read, one writing statement (or none readable) writes", () => {
    const exec = OPERATIONS.find((o) => o.name === "db.exec");
    const batch = OPERATIONS.find((o) => o.name === "db.batch");
    if (exec === undefined || batch === undefined) throw new Error("no db.exec or db.batch");
    const statements = (...sqls: string[]) => ({ statements: sqls.map((sql) => ({ sql })) });
    expect(
      [
        { sql: "SELECT * FROM t" },
        { sql: "INSERT INTO t VALUES (1)" },
        { sql: "WITH x AS (SELECT 1) DELETE FROM t" },
        {},
      ].map((input) => accessOf(exec, input)),
    ).toEqual(["read", "write", "write", "write"]);
    expect(
      [
        statements("SELECT 1", "SELECT 2"),
        statements("SELECT 1", "UPDATE t SET v = 1"),
        statements("CREATE TABLE u (v)"),
        { statements: "nope" },
      ].map((input) => accessOf(batch, input)),
    ).toEqual(["read", "write", "write", "write"]);
  });

  it("every operation that can add stored bytes may write, but db.query (its writes need db_exec)", () => {
    const storing = OPERATIONS.filter((op) => op.writesStorage !== false);
    expect(storing.filter((op) => !mayWrite(op)).map((op) => op.name)).toEqual(["db.query"]);
  });

  it("every operation that may write says whether it destroys and whether it is idempotent; reads say neither", () => {
    const writing = OPERATIONS.filter((op) => mayWrite(op));
    const undeclared = writing.filter(
      (op) => typeof op.destructive !== "boolean" || typeof op.idempotent !== "boolean",
    );
    expect(undeclared.map((op) => op.name)).toEqual([]);
    const reads = OPERATIONS.filter((op) => !mayWrite(op));
    expect(
      reads.filter((op) => op.destructive !== undefined || op.idempotent !== undefined).map((op) => op.name),
    ).toEqual([]);
    // Only a vault fetch reaches beyond Prim (MCP's openWorldHint).
    expect(OPERATIONS.filter((op) => op.openWorld === true).map((op) => op.name)).toEqual(["vault.fetch"]);
  });
});
