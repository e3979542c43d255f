import { PRIMITIVE_TYPES, toolInfo } from "@prim/wire";
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
    ...toolInfo("primitive_list"),
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
    ...toolInfo("primitive_create"),
    shape: {
      name: z.string().min(1).describe("Name for the new primitive (a-z, 0-9, '-', '_', '.')."),
      type: typeArg.describe("Kind of data store to create."),
    },
    actions: {
      create: { op: "primitive.create", fields: ["name", "type"], input: (_a, ctx) => ({ group: ctx.group.id }) },
    },
  },
  {
    ...toolInfo("primitive_snapshot"),
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
    ...toolInfo("primitive_fork"),
    shape: {
      primitive: anyPrimitive,
      name: z.string().optional().describe("Name of the copy (default: `<name>-fork-<6 chars>`)."),
      snapshot: z.string().optional().describe("Fork from this snapshot (label or id) instead of the live data."),
    },
    actions: { fork: { op: "primitive.fork", fields: ["name", "snapshot"] } },
  },
];
