import fc from "fast-check";

/**
 * fast-check generators for the hostile-input fuzz test: valid values drawn from the OpenAPI
 * document's JSON schemas, mixed with adversarial ones (wrong types, nulls and arrays where
 * objects belong, huge strings, control characters, JSON nested thousands of levels deep).
 */

export type JsonSchema = Record<string, any>;

/** Known-good values per field or parameter name, so generated requests reach past validation. */
export type Pools = Readonly<Record<string, readonly unknown[]>>;

/** Where values come from: the pools, and whether fields may turn hostile. */
export interface Source {
  pools: Pools;
  hostile: boolean;
}

/** Stands for JSON nested `depth` levels deep; `serialize` writes it (JSON.stringify cannot). */
export interface Deep {
  readonly deep: number;
  readonly kind: "array" | "object";
}

const isDeep = (v: unknown): v is Deep =>
  typeof v === "object" && v !== null && "deep" in v && "kind" in v && Object.keys(v).length === 2;

/** JSON text of `value`, with every Deep marker written out as real nesting. */
export function serialize(value: unknown): string {
  const markers: Deep[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (!isDeep(v)) return v;
    markers.push(v);
    return `\u0001deep${markers.length - 1}`;
  });
  if (text === undefined) return "";
  return text.replace(/"\\u0001deep(\d+)"/g, (_m, i: string) => {
    const { deep, kind } = markers[Number(i)] as Deep;
    return kind === "array" ? `${"[".repeat(deep)}1${"]".repeat(deep)}` : `${'{"a":'.repeat(deep)}1${"}".repeat(deep)}`;
  });
}

/** Built once: strings big enough to hit body, value and response limits. */
const HUGE = {
  k64: "x".repeat(64 * 1024),
  mib: "y".repeat(1024 * 1024 + 1),
  escaped: "\u0000\u001f".repeat(300_000),
};

const CONTROL_STRINGS = [
  "",
  "\u0000",
  "a\u0000b",
  "\r\n",
  "x\r\nSet-Cookie: a=b",
  "\u202e\u200b\ufeff",
  "\ud800",
  "\udfff\ud800",
  "..",
  "../../etc/passwd",
  "%FF",
  "%00",
  "' or 1=1 --",
  "😀".repeat(50),
  "__proto__",
  "constructor",
];

const hugeString = fc.constantFrom(HUGE.k64, HUGE.mib, HUGE.escaped);

export const deepJson: fc.Arbitrary<Deep> = fc.record({
  deep: fc.integer({ min: 1_000, max: 20_000 }),
  kind: fc.constantFrom<"array" | "object">("array", "object"),
});

/** A value of the wrong type, or hostile content, for any field. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<unknown>(null, [], {}, [null], [{}], true, false, 0, -1, 1.5) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(2 ** 53, -(2 ** 63), 1e308, -1e-308, "1e999", "NaN") },
  { weight: 3, arbitrary: fc.constantFrom(...CONTROL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: hugeString },
  { weight: 2, arbitrary: deepJson },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Percent-encodes the UTF-8 of `text` (lone surrogates become U+FFFD; encodeURIComponent throws). */
export function pct(text: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** `arb` one time in five, null otherwise. */
function rarely<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
}

/** A value valid for `schema` (mostly): the generator follows type, enum, pattern and bounds. */
export function valid(schema: JsonSchema | undefined, src: Source, field?: string): fc.Arbitrary<unknown> {
  const fromSchema = validBySchema(schema ?? {}, src);
  const pool = field === undefined ? undefined : src.pools[field];
  if (pool === undefined || pool.length === 0) return fromSchema;
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: fromSchema });
}

function validBySchema(schema: JsonSchema, src: Source): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.anyOf)) return fc.oneof(...schema.anyOf.map((s: JsonSchema) => validBySchema(s, src)));
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((t: string) => validBySchema({ ...schema, type: t }, src)));
  }
  switch (schema.type) {
    case "string":
      if (typeof schema.pattern === "string") return fc.stringMatching(new RegExp(schema.pattern));
      return fc.string({
        minLength: schema.minLength ?? 0,
        maxLength: Math.max(schema.minLength ?? 0, Math.min(schema.maxLength ?? 30, 30)),
      });
    case "integer": {
      const min = Math.max(schema.minimum ?? -MAX_SAFE, -MAX_SAFE);
      const max = Math.min(schema.maximum ?? MAX_SAFE, MAX_SAFE);
      return fc.oneof(fc.constantFrom(min, max), fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) }));
    }
    case "number":
      return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(field(schema.items, src), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 4, 4)),
      });
    case "object":
      return objectOf(schema, src);
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

/** A field's value: valid most of the time, hostile sometimes (when the source allows). */
function field(schema: JsonSchema | undefined, src: Source, name?: string): fc.Arbitrary<unknown> {
  if (!src.hostile) return valid(schema, src, name);
  return fc.oneof({ weight: 5, arbitrary: valid(schema, src, name) }, { weight: 1, arbitrary: hostileValue });
}

function objectOf(schema: JsonSchema, src: Source): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  if (Object.keys(properties).length === 0 && typeof schema.additionalProperties === "object") {
    return fc.dictionary(fc.string({ maxLength: 10 }), field(schema.additionalProperties, src), { maxKeys: 4 });
  }
  const required = new Set<string>(schema.required ?? []);
  const record = fc.record(
    Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, field(s, src, name)])),
    { requiredKeys: Object.keys(properties).filter((k) => required.has(k)) },
  );
  if (!src.hostile) return record;
  // Sometimes drop a required field or add an unknown one.
  const tweak = rarely(fc.constantFrom(...required, "unknown_field"));
  return fc.tuple(record, tweak, hostileValue).map(([obj, tweak, extra]) => {
    const out: Record<string, unknown> = { ...(obj as Record<string, unknown>) };
    if (tweak === "unknown_field") out.unknown_field = extra;
    else if (tweak !== null) delete out[tweak];
    return out;
  });
}

/** A request body for `schema`: a mostly valid object, a hostile value, or broken JSON text. */
export function body(schema: JsonSchema | undefined, pools: Pools): fc.Arbitrary<string> {
  const src = { pools, hostile: true };
  const brokenText = fc.constantFrom(
    "{",
    '{"a":',
    "\ufeff{}",
    "[1,2",
    '{"a":1}{"b":2}',
    "nul",
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    `{"a":"${"\\ud800"}"}`,
    "1".repeat(400),
  );
  return fc.oneof(
    { weight: 6, arbitrary: valid(schema ?? { type: "object" }, src).map(serialize) },
    { weight: 2, arbitrary: hostileValue.map(serialize) },
    { weight: 1, arbitrary: brokenText },
  );
}

/** Raw path text for one path parameter: known-good values, or adversarial segments. */
export function pathSegment(pool: readonly string[], wildcard: boolean, hostileToo = true): fc.Arbitrary<string> {
  if (!hostileToo && pool.length > 0) return fc.constantFrom(...pool);
  const hostile = fc.oneof(
    fc.constantFrom(
      "%FF",
      "%00",
      "%",
      "%2e%2e",
      "..",
      "%C0%AF",
      "a%2Fb",
      "a".repeat(3_000),
      "%F0%9F%98%80",
      pct("\u202e\ud7ff"),
    ),
    fc.string({ unit: "binary", minLength: 1, maxLength: 30 }).map(pct),
    ...(wildcard ? [fc.constantFrom("a/../../b", "a//b", "./x", "dir/", `${"d/".repeat(300)}x`)] : []),
  );
  if (pool.length === 0) return hostile;
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 2, arbitrary: hostile });
}

/** A body the schema accepts, for properties that aim their hostility elsewhere. */
export function plainBody(schema: JsonSchema | undefined, pools: Pools): fc.Arbitrary<string> {
  return valid(schema ?? { type: "object" }, { pools, hostile: false }).map(serialize);
}

/** A query string of valid values for the declared parameters. */
export function plainQuery(params: { name: string; schema: JsonSchema }[], pools: Pools): fc.Arbitrary<string> {
  const src = { pools, hostile: false };
  const one = (p: { name: string; schema: JsonSchema }) =>
    fc.option(
      valid(p.schema, src, p.name).map((v) => pct(String(v))),
      { freq: 2 },
    );
  return fc.tuple(...params.map(one)).map((values) => {
    const text = params.flatMap((p, i) => (values[i] === null ? [] : [`${p.name}=${values[i]}`])).join("&");
    return text === "" ? "" : `?${text}`;
  });
}

/** A query string for the declared parameters, with hostile values and extras sometimes. */
export function query(params: { name: string; schema: JsonSchema }[], pools: Pools): fc.Arbitrary<string> {
  const src = { pools, hostile: true };
  const one = (p: { name: string; schema: JsonSchema }) =>
    fc.option(
      fc.oneof(
        { weight: 4, arbitrary: valid(p.schema, src, p.name).map((v) => pct(String(v))) },
        { weight: 1, arbitrary: hostileValue.map((v) => pct(typeof v === "string" ? v : serialize(v))) },
        { weight: 1, arbitrary: fc.constantFrom("%FF", "", "%", "a".repeat(5_000)) },
      ),
      { freq: 2 },
    );
  const extra = rarely(fc.constantFrom("&limit=1&limit=2", "&x[y]=1", "&&=&", "&%FF=%FF", "&cursor=%00"));
  return fc.tuple(fc.tuple(...params.map(one)), extra).map(([values, more]) => {
    const parts = params.flatMap((p, i) => (values[i] === null ? [] : [`${p.name}=${values[i]}`]));
    const text = parts.join("&") + (more ?? "");
    return text === "" ? "" : `?${text}`;
  });
}
