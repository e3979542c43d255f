/**
 * An operation result may carry its own JSON serialisation under this symbol (JSON.stringify
 * ignores symbol keys). REST sends that text as the body instead of serialising the object
 * again — the kv read cache keeps it beside each hot entry.
 */
export const RAW_JSON: unique symbol = Symbol("prim.rawJson");

export interface WithRawJson {
  [RAW_JSON]?: string;
}

export function rawJsonOf(result: unknown): string | undefined {
  return typeof result === "object" && result !== null ? (result as WithRawJson)[RAW_JSON] : undefined;
}
