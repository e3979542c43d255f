import { toolInfo } from "@prim/wire";
import { z } from "zod";
import { durationArg, limitArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

const fields = ["after", "limit", "wait"] as const;

/** changes_read: one primitive's change feed, or (without `primitive`) the group's merged. */
export const CHANGE_TOOLS: ToolSpec[] = [
  {
    ...toolInfo("changes_read"),
    groupWide: true,
    shape: {
      primitive: z
        .string()
        .min(1)
        .optional()
        .describe("The primitive (id, or name in this group); omit it for every primitive of the group."),
      after: z.string().optional().describe("`cursor` of the previous answer (or of an entry), to continue after it."),
      limit: limitArg(1000, 100),
      wait: durationArg("How long to wait for a change when there is none yet (at most 30s)"),
    },
    pick: (args) => (args.primitive === undefined ? "group" : "primitive"),
    actions: {
      primitive: { op: "changes.read", fields },
      group: { op: "changes.group", fields },
    },
  },
];
