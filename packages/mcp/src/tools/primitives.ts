import { PRIMITIVE_TYPES } from "@prim/wire";
import { z } from "zod";
import { cursorArg, limitArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

const typeArg = z.enum(PRIMITIVE_TYPES);
const anyPrimitive = z
  .string()
  .min(1)
  .describe("The primitive: its id, or its name in this group (ids are unambiguous).");

export const PRIMITIVE_TOOLS: ToolSpec[] = [
  {
    name: "primitive_list",
    title: "List primitives",
    description:
      "Lists the data stores (primitives) in this group: id, name, type (db, fs, queue, memory, vault, kv, storage), size and whether it is paused. Call this first to find what exists.",
    shape: {
      type: typeArg.optional().describe("Only primitives of this type."),
      limit: limitArg(200, 50),
      cursor: cursorArg,
    },
    actions: {
      list: {
        op: "primitive.list",
        fields: ["type", "limit", "cursor"],
        input: (_a, ctx) => ({ group: ctx.group.id }),
      },
    },
  },
  {
    name: "primitive_create",
    title: "Create a primitive",
    description:
      "Creates a new data store in this group. Types: db (SQL database on SQLite), fs (files and directories), queue (job queues and topics), memory (agent memories with recall), vault (secrets usable in outbound requests without being revealed), kv (key-value), storage (objects with signed URLs). Names: 1-63 chars of a-z 0-9 - _ . starting with a letter or digit, unique per type in the group.",
    shape: {
      name: z.string().min(1).describe("Name for the new primitive (a-z, 0-9, '-', '_', '.')."),
      type: typeArg.describe("Kind of data store to create."),
    },
    actions: {
      create: { op: "primitive.create", fields: ["name", "type"], input: (_a, ctx) => ({ group: ctx.group.id }) },
    },
  },
  {
    name: "primitive_snapshot",
    title: "Snapshot or restore a primitive",
    description:
      'Takes a point-in-time snapshot of a primitive (action "create", optional label `name`), lists its snapshots ("list"), or restores one in place ("restore": the primitive keeps its id and its data becomes exactly the snapshot\'s; `snapshot` is the label or the snapshot id).',
    anyType: true,
    shape: {
      primitive: anyPrimitive,
      action: z.enum(["create", "list", "restore"]).describe("create a snapshot, list snapshots, or restore one."),
      name: z.string().optional().describe('Label for a new snapshot (action "create").'),
      snapshot: z.string().optional().describe('Label or id of the snapshot to restore (action "restore").'),
      limit: limitArg(200, 50),
      cursor: cursorArg,
    },
    actions: {
      create: { op: "primitive.snapshot", fields: ["name"] },
      list: { op: "primitive.snapshots", fields: ["limit", "cursor"] },
      restore: { op: "primitive.restore", fields: ["snapshot"] },
    },
  },
  {
    name: "primitive_fork",
    title: "Fork a primitive",
    description:
      "Copies a primitive (its live data, or a snapshot) into a new primitive in this group, for experiments that must not touch the original. Default name `<name>-fork-<6 chars>`. Large files and objects are shared, not copied; a queue copy releases leases.",
    anyType: true,
    shape: {
      primitive: anyPrimitive,
      name: z.string().optional().describe("Name of the copy (default: `<name>-fork-<6 chars>`)."),
      snapshot: z.string().optional().describe("Fork from this snapshot (label or id) instead of the live data."),
    },
    actions: { fork: { op: "primitive.fork", fields: ["name", "snapshot"] } },
  },
];
