import {
  ERROR_STATUS,
  isValidName,
  narrowTools,
  type Principal,
  ServiceError,
  toolAllowed,
  toolPatternMatches,
  toServiceError,
} from "@prim/wire";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { durationString, parseDuration, queueDuration } from "../../src/core/duration.js";
import { isUlid, prefixedId, randomToken, ulid } from "../../src/core/ids.js";
import { decodeCursor, encodeCursor, KEY_PAGE, LIST_PAGE, limitSchema } from "../../src/core/pagination.js";
import { lazyJson, rawJsonOf } from "../../src/core/raw-json.js";
import { parseInput } from "../../src/core/validation.js";

describe("errors", () => {
  it("maps every spec code to its status", () => {
    expect(ERROR_STATUS).toMatchObject({
      invalid_request: 400,
      wrong_type: 400,
      invalid_token: 401,
      forbidden: 403,
      group_mismatch: 403,
      plan_limit: 403,
      tool_not_allowed: 403,
      secret_policy_denied: 403,
      not_found: 404,
      already_exists: 409,
      conflict: 409,
      branch_conflict: 409,
      fs_conflict: 409,
      lease_expired: 410,
      secret_grant_expired: 410,
      precondition_failed: 412,
      payload_too_large: 413,
      range_not_satisfiable: 416,
      paused: 423,
      rate_limited: 429,
      internal_error: 500,
      upstream_error: 502,
    });
    expect(Object.keys(ERROR_STATUS)).toHaveLength(22);
  });

  it("serialises to the spec's error body", () => {
    const err = new ServiceError("not_found", "key 'a' not found");
    expect(err.status).toBe(404);
    expect(err.toJSON()).toEqual({ error: { code: "not_found", message: "key 'a' not found" } });
  });

  it("hides system faults behind internal_error", () => {
    const err = toServiceError(new Error("SQLITE_CORRUPT at /secret/path"));
    expect(err.code).toBe("internal_error");
    expect(err.status).toBe(500);
    expect(err.message).not.toContain("secret");
  });
});

describe("ids", () => {
  it("hands out random tokens that never repeat, across pool refills", () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 2000; i++) tokens.add(randomToken(16)); // ~8 refills of the 4 KiB pool
    expect(tokens.size).toBe(2000);
    for (const t of tokens) expect(t).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(randomToken(5000)).toHaveLength(Math.ceil((5000 * 4) / 3));
  });

  it("makes 26-char lowercase ULIDs that sort by time", () => {
    const a = ulid(1_000);
    const b = ulid(2_000);
    expect(a).toMatch(/^[0-9a-z]{26}$/);
    expect(isUlid(a)).toBe(true);
    expect(a < b).toBe(true);
  });

  it("stays monotonic inside one millisecond", () => {
    const ids = Array.from({ length: 1000 }, () => ulid(5_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
  });

  it("prefixes other ids", () => {
    expect(prefixedId("snap")).toMatch(/^snap_[0-9a-z]{26}$/);
  });

  it("rejects what is not a ULID", () => {
    expect(isUlid("01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBe(false); // uppercase
    expect(isUlid("not-an-id")).toBe(false);
    expect(isUlid(`${ulid()}x`)).toBe(false);
  });
});

describe("names", () => {
  it.each(["a", "0", "my-group", "a.b_c-d", "x".repeat(63)])("accepts %s", (name) => {
    expect(isValidName(name)).toBe(true);
  });
  it.each(["", "-a", ".a", "_a", "A", "a b", "a/b", "x".repeat(64), "é"])("rejects %j", (name) => {
    expect(isValidName(name)).toBe(false);
  });
});

describe("durations", () => {
  it.each([
    ["250ms", 250],
    ["30s", 30_000],
    ["5m", 300_000],
    ["1h", 3_600_000],
    ["7d", 604_800_000],
    ["30", 30_000],
    ["0", 0],
  ])("parses %s", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "1.5h", "-1s", "5w", "s", "1 h"])("rejects %j", (text) => {
    expect(parseDuration(text)).toBeNull();
  });

  it("takes integer milliseconds only where allowed", () => {
    expect(queueDuration.parse(1500)).toBe(1500);
    expect(durationString.safeParse(1500).success).toBe(false);
    expect(durationString.safeParse("0s").success).toBe(false);
    expect(durationString.safeParse("99999d").success).toBe(false);
  });
});

describe("pagination", () => {
  it("has the spec's defaults and maxima", () => {
    expect(limitSchema(LIST_PAGE).parse(undefined)).toBe(50);
    expect(limitSchema(KEY_PAGE).parse(undefined)).toBe(100);
    expect(limitSchema(LIST_PAGE).parse("200")).toBe(200);
    expect(limitSchema(LIST_PAGE).safeParse("201").success).toBe(false);
    expect(limitSchema(KEY_PAGE).parse("1000")).toBe(1000);
    expect(limitSchema(KEY_PAGE).safeParse("1001").success).toBe(false);
    expect(limitSchema(KEY_PAGE).safeParse("0").success).toBe(false);
  });

  it("round-trips opaque cursors and rejects forged ones", () => {
    const schema = z.object({ k: z.string() });
    expect(decodeCursor(encodeCursor({ k: "a/b" }), schema)).toEqual({ k: "a/b" });
    expect(() => decodeCursor("garbage!", schema)).toThrow(ServiceError);
    expect(() => decodeCursor(encodeCursor({ x: 1 }), schema)).toThrow(/cursor/);
  });
});

describe("tool patterns", () => {
  const scoped = (tools: string[]): Principal => ({
    kind: "scoped",
    workspace: "local",
    actor: "key:k",
    groupId: "g",
    tools,
  });

  it("matches globs", () => {
    expect(toolPatternMatches("kv_*", "kv_get")).toBe(true);
    expect(toolPatternMatches("kv_*", "db_query")).toBe(false);
    expect(toolPatternMatches("db_query", "db_query")).toBe(true);
    expect(toolPatternMatches("db_q.ery", "db_query")).toBe(false);
    expect(toolPatternMatches("*", "fs_read")).toBe(true);
  });

  it("narrows by every allowlist", () => {
    const p = narrowTools(scoped(["kv_*"]), ["kv_get", "db_*"]);
    expect(toolAllowed(p, "kv_get")).toBe(true);
    expect(toolAllowed(p, "kv_set")).toBe(false);
    expect(toolAllowed(p, "db_query")).toBe(false);
  });
});

describe("validation", () => {
  it("names the failing field", () => {
    const schema = z.strictObject({ items: z.array(z.strictObject({ key: z.string() })) });
    expect(() => parseInput(schema, { items: [{ key: "a" }, { key: 1 }] })).toThrow(/items\[1\]\.key/);
    expect(() => parseInput(schema, {})).toThrow(/items: required/);
    expect(() => parseInput(schema, { items: [], extra: 1 })).toThrow(/unknown field: extra/);
  });
});

describe("lazyJson", () => {
  it("keeps its text for REST and reads like the parsed object", () => {
    const text = '{"columns":["id"],"rows":[{"id":1}],"truncated":false}';
    const value = lazyJson<{ columns: string[]; rows: { id: number }[]; truncated: boolean }>(text);
    expect(rawJsonOf(value)).toBe(text);
    expect(value.rows[0]?.id).toBe(1);
    expect(value).toEqual({ columns: ["id"], rows: [{ id: 1 }], truncated: false });
    expect(JSON.stringify(value)).toBe(text);
    expect(Object.keys(value)).toEqual(["columns", "rows", "truncated"]);
    expect("rows" in value).toBe(true);
  });
});
