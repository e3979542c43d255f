import { ServiceError } from "@prim/wire";
import type { z } from "zod";

/** `items[3].key`: the path of a zod issue, as a caller would write it. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

function describe(issue: z.core.$ZodIssue): string {
  const field = fieldPath(issue.path);
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) return `${field}: required`;
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => (field ? `${field}.${k}` : k)).join(", ");
    return `unknown field${issue.keys.length > 1 ? "s" : ""}: ${keys}`;
  }
  return field ? `${field}: ${issue.message}` : issue.message;
}

/** Parses input with a schema; failures become 400 `invalid_request` naming each field. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const message = result.error.issues.slice(0, 5).map(describe).join("; ");
  throw new ServiceError("invalid_request", message);
}
