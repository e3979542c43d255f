import { describe, expect, it } from "vitest";
import { runtimeWarning } from "../src/runtime-check.js";

describe("runtime check", () => {
  it("warns on Node >= 24.19 with better-sqlite3 before 13, and only there", () => {
    expect(runtimeWarning("24.19.0", "12.11.1")).toContain("better-sqlite3#1515");
    expect(runtimeWarning("24.21.0", "12.11.1")).toContain("Node 24.21.0");
    expect(runtimeWarning("26.0.0", "12.11.1")).not.toBeNull();
    expect(runtimeWarning("24.18.1", "12.11.1")).toBeNull();
    expect(runtimeWarning("22.23.2", "12.11.1")).toBeNull();
    expect(runtimeWarning("20.20.2", "12.11.1")).toBeNull();
    expect(runtimeWarning("24.21.0", "13.2.0")).toBeNull();
  });

  it("reads the installed better-sqlite3 version", () => {
    const on26 = runtimeWarning("26.0.0");
    // The repository pins better-sqlite3 12 (it still supports Node 20).
    expect(on26).toMatch(/better-sqlite3 12\.\d+\.\d+/);
  });
});
