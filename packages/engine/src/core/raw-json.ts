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

/**
 * An object known by its JSON text: parsed only when something reads a field of it (MCP, a test
 * calling the engine), while REST sends the text as the body without ever parsing it.
 */
export function lazyJson<T extends object>(text: string): T {
  let parsed: Record<PropertyKey, unknown> | undefined;
  const value = () => {
    parsed ??= JSON.parse(text) as Record<PropertyKey, unknown>;
    return parsed;
  };
  return new Proxy({} as T, {
    get: (_target, key) => {
      if (key === RAW_JSON) return text;
      if (key === "toJSON") return value;
      return value()[key];
    },
    has: (_target, key) => key === RAW_JSON || key in value(),
    ownKeys: () => Reflect.ownKeys(value()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(value(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  });
}
