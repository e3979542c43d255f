// The spec's "What counts as an operation", written out once: every operation of the registry
// must be classified here, so a new one cannot slip in counted or free by accident.
import { OPERATION_NAMES } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../src/registry.js";

/**
 * Not counted (spec): creating a primitive, group routes, audit reads, `GET /primitives`; also
 * the primitive's own record (`GET/PATCH/DELETE /primitives/{id}` are not routes *under* it)
 * and the lookups a transport makes before the call it serves (MCP resolves a primitive by
 * name, then calls it: one counted operation). Group export and import are group routes but
 * are counted, like a snapshot (issue 25); how much of an upload arrived and whoami are not.
 * Waiting on a secret request (`vault.request_get`, no REST route) is not counted either: the
 * `vault_request_secret` call that asked is, and its wait polls the request until a person answers.
 */
const NOT_COUNTED = [
  "group.create",
  "group.list",
  "group.get",
  "group.delete",
  "group.find",
  "primitive.resolve",
  "primitive.create",
  "primitive.list",
  "primitive.get",
  "primitive.update",
  "primitive.delete",
  "audit.list",
  "audit.group",
  "audit.primitive",
  "group.import_status",
  "auth.whoami",
  "vault.request_get",
];

describe("metering table", () => {
  it("classifies every operation exactly as the spec counts it", () => {
    expect(OPERATIONS.map((op) => op.name).sort()).toEqual([...OPERATION_NAMES].sort());
    for (const op of OPERATIONS) {
      expect({ op: op.name, metered: op.metered }).toEqual({ op: op.name, metered: !NOT_COUNTED.includes(op.name) });
    }
  });

  const ENQUEUERS = ["db.query", "db.exec", "db.batch"];

  it("counts each entry of a batch as one operation, and every other call as one", () => {
    const batches: Record<string, [string, number][]> = {
      "queue.send_batch": [["messages", 100]],
      "queue.publish_batch": [["messages", 7]],
      "queue.ack_batch": [["acks", 1]],
    };
    for (const op of OPERATIONS) {
      const cases = batches[op.name];
      if (cases === undefined) {
        // db writes count their enqueued messages (next test).
        if (!ENQUEUERS.includes(op.name))
          expect({ op: op.name, units: op.units }).toEqual({ op: op.name, units: undefined });
        continue;
      }
      for (const [field, n] of cases) {
        expect(op.units?.({ [field]: Array.from({ length: n }, () => ({})) })).toBe(n);
      }
      // A call that is not a batch (it fails validation) counts one; more than 100 counts 100.
      expect(op.units?.({})).toBe(1);
      expect(op.units?.({ [cases[0]?.[0] ?? ""]: Array.from({ length: 500 }) })).toBe(100);
    }
  });

  it("counts a db write's enqueued messages as one queue operation each, on top of the call", () => {
    for (const name of ENQUEUERS) {
      const op = OPERATIONS.find((o) => o.name === name);
      expect(op?.units?.({ sql: "SELECT 1" })).toBe(1);
      expect(op?.units?.({ sql: "SELECT 1", enqueue: [{}, {}, {}] })).toBe(4);
      expect(op?.units?.({ enqueue: Array.from({ length: 500 }) })).toBe(101);
    }
  });

  it("counts every route under /primitives/{id}/ (snapshots, fork, restore, pause, export, stats) and signed URLs", () => {
    const counted = new Set(OPERATIONS.filter((op) => op.metered).map((op) => op.name));
    for (const name of [
      "primitive.snapshot",
      "primitive.snapshots",
      "primitive.restore",
      "primitive.fork",
      "primitive.pause",
      "primitive.resume",
      "primitive.export",
      "primitive.stats",
      "storage.signed",
      "storage.presign",
      "vault.fetch",
      "queue.send",
      "queue.receive",
    ]) {
      expect(counted.has(name), name).toBe(true);
    }
  });
});
