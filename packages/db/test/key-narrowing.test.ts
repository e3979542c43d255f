import { describe, expect, it } from "vitest";
import { MAX_KEY_DEPTH, narrowBudget, narrowKey, patternCovers } from "../src/index.js";

const parent = { groupId: "grp_a", tools: ["kv_*", "db_query"], readOnly: false };

describe("minted keys are at most as wide as their parent", () => {
  it("happy: an omitted property inherits the parent's; a narrower one is kept", () => {
    expect(narrowKey(parent, {})).toEqual(parent);
    expect(narrowKey(parent, { groupId: "grp_a", tools: ["kv_get", "kv_l*"], readOnly: true })).toEqual({
      groupId: "grp_a",
      tools: ["kv_get", "kv_l*"],
      readOnly: true,
    });
    expect(narrowKey({ groupId: null, tools: null, readOnly: false }, { groupId: "grp_b", tools: ["*"] })).toEqual({
      groupId: "grp_b",
      tools: ["*"],
      readOnly: false,
    });
    expect(narrowKey({ groupId: null, tools: null, readOnly: false }, { groupId: null })).toMatchObject({
      groupId: null,
    });
  });

  it("security: wider on any property is 403 forbidden naming it", () => {
    const refused = (asked: Parameters<typeof narrowKey>[1], property: string) =>
      expect(() => narrowKey(parent, asked)).toThrow(
        expect.objectContaining({ code: "forbidden", message: expect.stringContaining(property) }),
      );
    refused({ groupId: "grp_b" }, "group");
    refused({ groupId: null }, "group");
    refused({ tools: ["db_exec"] }, "tools");
    refused({ tools: ["*"] }, "tools");
    refused({ tools: ["db_*"] }, "tools");
    refused({ tools: ["k*"] }, "tools");
    expect(() => narrowKey({ ...parent, readOnly: true }, { readOnly: false })).toThrow(/read_only/);
    expect(narrowKey({ ...parent, readOnly: true }, {}).readOnly).toBe(true);
  });

  it("pattern coverage is decided on the patterns, so it holds for tools added later", () => {
    expect(patternCovers("*", "anything_*")).toBe(true);
    expect(patternCovers("fs_*", "fs_re*")).toBe(true);
    expect(patternCovers("fs_*", "fs_*")).toBe(true);
    expect(patternCovers("fs_*", "f*")).toBe(false);
    expect(patternCovers("fs_read", "fs_*")).toBe(false);
    expect(patternCovers("*_get", "kv_get")).toBe(false); // a `*` inside: only the same pattern
    expect(patternCovers("*_get", "*_get")).toBe(true);
    expect(MAX_KEY_DEPTH).toBe(8);
  });

  it("a budget: any under a parent without one; under a budgeted parent, the same kind and no larger", () => {
    expect(narrowBudget(null, undefined)).toBeNull();
    expect(narrowBudget(null, { per: "day", limit: 5 })).toEqual({ per: "day", limit: 5 });
    expect(narrowBudget({ total: 100 }, { total: 100 })).toEqual({ total: 100 });
    expect(narrowBudget({ per: "month", limit: 9 }, { per: "month", limit: 3 })).toEqual({ per: "month", limit: 3 });
    expect(() => narrowBudget({ total: 100 }, undefined)).toThrow(/budget: .*give the child one/);
    expect(() => narrowBudget({ total: 100 }, { total: 101 })).toThrow(/budget/);
    expect(() => narrowBudget({ total: 100 }, { per: "day", limit: 1 })).toThrow(/a total/);
    expect(() => narrowBudget({ per: "day", limit: 10 }, { per: "month", limit: 1 })).toThrow(/per day/);
  });
});
