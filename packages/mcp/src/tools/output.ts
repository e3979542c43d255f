import {
  errorBody,
  fsEntry,
  fsListing,
  objectInfo,
  presignResult,
  resultSchema,
  subscription,
} from "@prim/wire/schemas";
import { z } from "zod";
import type { ToolSpec } from "./spec.js";

/**
 * What tools answer besides an operation's own JSON (`@prim/wire/schemas`, the REST routes'
 * response schemas too): reads with their bytes inline, signed URLs made absolute, an operation
 * with no answer.
 */

/** Bytes inline: text when they are valid UTF-8, else base64 (`encodeBytes`). */
export const inlineBytes = z.union([z.object({ text: z.string() }), z.object({ base64: z.string() })]);

/** An operation that answers nothing (a delete): `{ result: null }`. */
export const noResult = z.object({ result: z.null() });

/** fs_read: a listing, an entry (stat, a directory), or a file with its content. */
export const fsReadResult = z.union([
  fsListing,
  fsEntry,
  z.object({ ...fsEntry.shape, content_type: z.string(), content: inlineBytes }),
]);

/** storage_read: the object's info (stat), or the info with its content. */
export const storageReadResult = z.union([objectInfo, z.object({ ...objectInfo.shape, content: inlineBytes })]);

/** storage_sign presign: the grant with an absolute URL, or a path and why (stdio without `prim dev`). */
export const presignToolResult = z.object({ ...presignResult.shape, note: z.string().optional() });

/** queue_receive subscribe: the subscription and whether this call made it. */
export const subscribeResult = z.object({ ...subscription.shape, created: z.boolean() });

/** A tool action's structured result: its own `result`, else its operation's JSON answer. */
export function actionResultSchema(tool: ToolSpec, action: string): z.ZodType {
  const spec = tool.actions[action];
  const schema = spec?.result ?? (spec === undefined ? undefined : resultSchema(spec.op));
  if (schema === undefined) throw new Error(`MCP tool ${tool.name} (${action}): no result schema for ${spec?.op}`);
  return schema;
}

/**
 * The tool's `outputSchema` (JSON Schema, draft-07 as the SDK converts input schemas): any of its
 * actions' results, or the spec's error body (the SDK client validates error results too). MCP
 * asks for an object at the top, so the union sits under `type: "object"`.
 */
export function toolOutputSchema(tool: ToolSpec): Record<string, unknown> & { type: "object" } {
  return outputSchemaOf(Object.keys(tool.actions).map((action) => actionResultSchema(tool, action)));
}

/** An `outputSchema` of any of `results` or the error body (a control tool's too: tools/keys.ts). */
export function outputSchemaOf(results: readonly z.ZodType[]): Record<string, unknown> & { type: "object" } {
  const unique = [...new Set(results)];
  const json = z.toJSONSchema(z.union([errorBody, ...unique]), {
    target: "draft-7",
    io: "output",
  }) as Record<string, unknown>;
  const { $schema: _schema, ...rest } = json;
  return { type: "object", ...rest };
}
