import { z } from "zod";

export const primitiveArg = (type: string) =>
  z.string().min(1).describe(`The ${type} primitive to use: its id, or its name in this group.`);

export const limitArg = (max: number, fallback: number) =>
  z.number().int().min(1).max(max).optional().describe(`Page size (default ${fallback}, at most ${max}).`);

export const cursorArg = z.string().optional().describe("`next_cursor` from the previous page, to continue a listing.");

export const durationArg = (what: string) =>
  z
    .union([z.string(), z.number().int()])
    .optional()
    .describe(
      `${what}: a duration such as "250ms", "30s", "5m", "1h", "7d" (a bare number in a string means seconds).`,
    );

export const encodingArg = z
  .enum(["utf8", "base64"])
  .optional()
  .describe('How `content` is encoded: "utf8" text (default) or "base64" bytes.');
