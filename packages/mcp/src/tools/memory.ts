import { z } from "zod";
import { cursorArg, primitiveArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("memory");
const kind = z.string().describe('What sort of memory: e.g. "fact", "preference", "episode", "instruction".');
const tags = z.array(z.string()).optional().describe("Labels to filter by later.");
const owner = z.string().optional().describe("Whose memory this is (a user or agent id).");
const metadata = z.record(z.string(), z.unknown()).optional().describe("Any JSON object kept with the memory.");
const id = z.string().describe("Memory id (mem_…).");

export const MEMORY_TOOLS: ToolSpec[] = [
  {
    name: "memory_remember",
    title: "Remember",
    description:
      "Stores a memory: `text` with its `kind`, optional `tags`, `owner` and `metadata`. Returns the record with its id.",
    type: "memory",
    shape: {
      primitive: p,
      kind,
      text: z.string().describe("The memory itself, in plain words."),
      tags,
      owner,
      metadata,
    },
    actions: { remember: { op: "memory.remember", fields: ["kind", "text", "tags", "owner", "metadata"] } },
  },
  {
    name: "memory_recall",
    title: "Recall memories",
    description:
      '"recall" (default): the memories most relevant to `query`, ranked with a `score` (word match, fuzzy match for typos, recency); filter by `kinds`, `tags`, `owner`. "list": newest first (filters `kind`, `tag`, `owner`). "get": one memory by `id`. Superseded memories are left out unless `include_superseded`.',
    type: "memory",
    shape: {
      primitive: p,
      action: z.enum(["recall", "list", "get"]).optional().describe('Default "recall".'),
      query: z.string().optional().describe("What to recall, in plain words."),
      kinds: z.array(z.string()).optional().describe("recall: only these kinds."),
      tags,
      owner,
      include_superseded: z.boolean().optional().describe("recall: include replaced memories."),
      kind: z.string().optional().describe("list: only this kind."),
      tag: z.string().optional().describe("list: only memories with this tag."),
      id: id.optional(),
      limit: z
        .number()
        .int()
        .min(1)
        .max(200)
        .optional()
        .describe("Results at most: recall default 10, max 100; list default 50, max 200."),
      cursor: cursorArg,
    },
    actions: {
      recall: { op: "memory.recall", fields: ["query", "kinds", "tags", "owner", "include_superseded", "limit"] },
      list: { op: "memory.list", fields: ["kind", "tag", "owner", "limit", "cursor"] },
      get: { op: "memory.get", fields: ["id"] },
    },
  },
  {
    name: "memory_forget",
    title: "Forget, supersede or consolidate memories",
    description:
      '"forget": deletes memory `id` for good. "supersede": replaces memory `id` with new `text` (the old one is kept, marked superseded, and left out of recall). "consolidate": finds near-duplicate memories (same kind and owner, similarity ≥ `threshold`) and supersedes all but the newest of each group.',
    type: "memory",
    shape: {
      primitive: p,
      action: z.enum(["forget", "supersede", "consolidate"]),
      id: id.optional(),
      text: z.string().optional().describe("supersede: the replacement text."),
      kind: z.string().optional().describe("supersede: a new kind."),
      tags,
      metadata,
      threshold: z.number().min(0).max(1).optional().describe("consolidate: similarity from 0 to 1."),
    },
    actions: {
      forget: { op: "memory.forget", fields: ["id"] },
      supersede: { op: "memory.supersede", fields: ["id", "text", "kind", "tags", "metadata"] },
      consolidate: { op: "memory.consolidate", fields: ["threshold"] },
    },
  },
];
