// What the cloud's plan limits make of each operation, written out once (spec, Enforcement):
// every operation of the registry must be classified here exactly as its declaration says, so a
// new one cannot slip in as a free write at Starter's storage cap, a free Pro feature or an
// unlimited lookup. Metering has its own table (metering-table.test.ts).
import type { OperationName } from "@prim/wire";
import { OPERATION_NAMES } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { writesStorage } from "../src/primitives/operation.js";
import { OPERATIONS } from "../src/registry.js";

/**
 * `writesStorage`: refused at Starter's 5 GB (spec, Enforcement 2: db exec and batch, file
 * writes, queue sends — batches too —, remember, setting a secret, setting or incrementing keys,
 * putting or copying objects, uploads via signed URL, creating a primitive; also what copies data:
 * a branch, an fs fork, a snapshot, restore, fork or import). `PUT only`: a signed URL's upload,
 * not its downloads. `planFeature`: Starter answers 403 (Enforcement 4). `lookup`: what a
 * transport resolves before the call it serves, neither limited nor counted. Reads, deletes and
 * settings (grants, subscriptions, pause) are none of these.
 */
type Class =
  | ""
  | "writesStorage"
  | "writesStorage: PUT only"
  | "writesStorage: writing SQL only"
  | "planFeature"
  | "writesStorage planFeature"
  | "lookup";

const CLASSES: Record<OperationName, Class> = {
  "group.create": "",
  "group.list": "",
  "group.get": "",
  "group.delete": "",
  "group.find": "lookup",
  "primitive.resolve": "lookup",
  "primitive.create": "writesStorage",
  "primitive.list": "",
  "primitive.get": "",
  "primitive.update": "",
  "primitive.delete": "",
  "primitive.stats": "",
  "primitive.export": "",
  "primitive.snapshot": "writesStorage planFeature",
  "primitive.snapshots": "",
  "primitive.restore": "writesStorage planFeature",
  "primitive.fork": "writesStorage planFeature",
  "primitive.pause": "",
  "primitive.resume": "",
  "group.export": "planFeature",
  "group.import": "writesStorage planFeature",
  "group.import_status": "",
  "auth.whoami": "",
  "audit.list": "planFeature",
  "audit.group": "planFeature",
  "audit.primitive": "planFeature",
  // Change feeds: Starter has them (issue 42: webhooks are the Pro feature).
  "changes.read": "",
  "changes.group": "",
  "kv.list": "",
  "kv.get": "",
  "kv.set": "writesStorage",
  "kv.delete": "",
  "kv.mget": "",
  "kv.mset": "writesStorage",
  "kv.mdelete": "",
  "kv.incr": "writesStorage",
  "db.query": "writesStorage: writing SQL only",
  "db.exec": "writesStorage",
  "db.batch": "writesStorage",
  "db.tables": "",
  "db.table": "",
  "db.branch.create": "writesStorage",
  "db.branch.list": "",
  "db.branch.promote": "",
  "db.branch.delete": "",
  "storage.list": "",
  "storage.read": "",
  "storage.put": "writesStorage",
  "storage.delete": "",
  "storage.copy": "writesStorage",
  "storage.presign": "",
  "storage.revoke": "",
  "storage.signed": "writesStorage: PUT only",
  "fs.read": "",
  "fs.write": "writesStorage",
  "fs.delete": "",
  "fs.mkdir": "writesStorage",
  "fs.move": "",
  "fs.glob": "",
  "fs.search": "",
  "fs.fork": "writesStorage",
  "queue.send": "writesStorage",
  "queue.receive": "",
  "queue.ack": "",
  "queue.heartbeat": "",
  "queue.requeue": "",
  "queue.purge": "",
  "queue.queues": "",
  "queue.messages": "",
  "queue.get": "",
  "queue.subscribe": "",
  "queue.unsubscribe": "",
  "queue.publish": "writesStorage",
  "queue.send_batch": "writesStorage",
  "queue.ack_batch": "",
  "queue.publish_batch": "writesStorage",
  "memory.remember": "writesStorage",
  "memory.list": "",
  "memory.get": "",
  "memory.forget": "",
  "memory.supersede": "writesStorage",
  "memory.recall": "",
  "memory.consolidate": "",
  "memory.history": "",
  "vault.put": "writesStorage",
  "vault.delete": "",
  "vault.list": "",
  "vault.grant": "",
  "vault.grants": "",
  "vault.revoke": "",
  "vault.fetch": "",
  "vault.request": "",
  "vault.request_get": "",
  "vault.request_fulfil": "writesStorage",
  "vault.request_decline": "",
  "vault.requests": "",
};

/** An operation's class as its declaration says it. */
function declared(op: (typeof OPERATIONS)[number]): Class {
  const decides = (write: unknown, read: unknown) => writesStorage(op, write) && !writesStorage(op, read);
  const storage =
    typeof op.writesStorage === "function"
      ? decides({ method: "PUT" }, { method: "GET" })
        ? "writesStorage: PUT only"
        : decides({ sql: "INSERT INTO t VALUES (1)" }, { sql: "SELECT 1" })
          ? "writesStorage: writing SQL only"
          : "writesStorage: ?"
      : op.writesStorage
        ? "writesStorage"
        : "";
  return [storage, op.planFeature === true ? "planFeature" : "", op.lookup === true ? "lookup" : ""]
    .filter((part) => part !== "")
    .join(" ") as Class;
}

describe("plan limit classes", () => {
  it("classifies every operation exactly as its declaration says", () => {
    expect(OPERATIONS.map((op) => op.name).sort()).toEqual([...OPERATION_NAMES].sort());
    expect(Object.fromEntries(OPERATIONS.map((op) => [op.name, declared(op)]))).toEqual(CLASSES);
  });

  it("/query writes storage only with a statement that may write", () => {
    const query = OPERATIONS.find((op) => op.name === "db.query");
    if (query === undefined) throw new Error("no db.query");
    const writes = (sql: unknown) => writesStorage(query, { sql });
    for (const sql of [
      "INSERT INTO t VALUES (1)",
      "  /* c */ create table x (a)",
      "WITH n AS (SELECT 1) INSERT INTO t SELECT * FROM n",
      "with d as (select 1) delete from t",
      "REPLACE INTO t VALUES (1)",
      "UPDATE t SET a = 1",
      "DROP TABLE t",
    ]) {
      expect(writes(sql), sql).toBe(true);
    }
    for (const sql of [
      "SELECT * FROM t",
      "-- read\nselect 'insert into t values (1)'",
      "WITH n AS (SELECT 1) SELECT * FROM n",
      "VALUES (1)",
      "EXPLAIN INSERT INTO t VALUES (1)",
      "PRAGMA table_info(t)",
      undefined,
    ]) {
      expect(writes(sql), String(sql)).toBe(false);
    }
  });

  it("a signed URL writes only for PUT: HEAD and GET are reads", () => {
    const signed = OPERATIONS.find((op) => op.name === "storage.signed");
    expect(signed && ["PUT", "GET", "HEAD"].map((method) => writesStorage(signed, { method }))).toEqual([
      true,
      false,
      false,
    ]);
  });

  it("every queue send and publish writes, batches too (issue 35: a batch passed the storage cap)", () => {
    const sends = OPERATIONS.filter((op) => /^queue\.(send|publish)/.test(op.name));
    expect(sends.map((op) => [op.name, writesStorage(op, {})])).toEqual([
      ["queue.send", true],
      ["queue.publish", true],
      ["queue.send_batch", true],
      ["queue.publish_batch", true],
    ]);
  });
});
