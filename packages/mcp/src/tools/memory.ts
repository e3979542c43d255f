import { toolInfo } from "@prim/wire";
import { z } from "zod";
import { cursorArg, primitiveArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("memory");
const kind = z.string().describe('What sort of memory: e.g. "fact", "preference", "episode", "instruction".');
const tags = z.array(z.string()).optional().describe("Labels to filter by later.");
const owner = z.string().optional().describe("Whose memory this is (a user or agent id).");
const metadata = z.record(z.string(), z.unknown()).optional().describe("Any JSON object kept with the memory.");
const id = z.string().describe("Memory id (mem_…).");
const ms = (what: string) => z.number().int().min(0).optional().describe(what);

export const MEMORY_TOOLS: ToolSpec[] = [
  {
    ...toolInfo("memory_remember"),
    shape: {
      primitive: p,
      kind,
      text: z.string().describe("The memory itself, in plain words."),
      tags,
      owner,
      metadata,
      id: id.optional().describe("Change this memory (a new version) instead of storing a new one."),
      if_version: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("With id: change it only if it is still at this version (else precondition_failed)."),
    },
    actions: {
      remember: {
        op: "memory.remember",
        fields: ["kind", "text", "tags", "owner", "metadata", "id", "if_version"],
      },
    },
  },
  {
    ...toolInfo("memory_recall"),
    shape: {
      primitive: p,
      action: z.enum(["recall", "list", "get", "history"]).optional().describe('Default "recall".'),
      query: z.string().optional().describe("What to recall, in plain words."),
      kinds: z.array(z.string()).optional().describe("recall: only these kinds."),
      tags,
      owner,
      include_superseded: z.boolean().optional().describe("recall: include replaced memories."),
      since: ms("recall: only memories created at or after this time (ms since the epoch)."),
      until: ms("recall: only memories created at or before this time (ms since the epoch)."),
      as_of: ms("recall: the memories as they were at this time (ms since the epoch)."),
      min_score: z.number().min(0).max(1).optional().describe("recall: leave out results scoring below this (0..1)."),
      kind: z.string().optional().describe("list: only this kind."),
      tag: z.string().optional().describe("list: only memories with this tag."),
      id: id.optional().describe("get, history: the memory (mem_…)."),
      limit: z
        .number()
        .int()
        .min(1)
        .max(200)
        .optional()
        .describe("Results at most: recall default 10, max 100; list and history default 50, max 200."),
      cursor: cursorArg,
    },
    actions: {
      recall: {
        op: "memory.recall",
        fields: [
          "query",
          "kinds",
          "tags",
          "owner",
          "include_superseded",
          "since",
          "until",
          "as_of",
          "min_score",
          "limit",
        ],
      },
      list: { op: "memory.list", fields: ["kind", "tag", "owner", "limit", "cursor"] },
      get: { op: "memory.get", fields: ["id"] },
      history: { op: "memory.history", fields: ["id", "limit", "cursor"] },
    },
  },
  {
    ...toolInfo("memory_forget"),
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
