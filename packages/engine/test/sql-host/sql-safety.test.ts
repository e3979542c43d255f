import { describe, expect, it } from "vitest";
import { checkStatementAllowed, leadingKeyword, leadingTokens } from "../../src/sql-host/sql-safety.js";

describe("sql-safety", () => {
  it("finds the statement kind past comments and EXPLAIN", () => {
    expect(leadingKeyword("  -- hi\n /* x */ select 1")).toBe("SELECT");
    expect(leadingKeyword("EXPLAIN QUERY PLAN delete from t")).toBe("DELETE");
    expect(leadingKeyword("explain attach 'x' as y")).toBe("ATTACH");
  });

  it("treats string literals as one token", () => {
    expect(leadingTokens("insert into t values ('a ( '' b')", 10)).toEqual([
      "INSERT",
      "INTO",
      "T",
      "VALUES",
      "(",
      "'",
      ")",
    ]);
  });

  it.each([
    "ATTACH 'x.db' AS x",
    "detach x",
    "VACUUM INTO '/tmp/x.db'",
    "BEGIN",
    "/* c */ PRAGMA journal_mode = DELETE",
    "PRAGMA/**/synchronous=OFF -- pragma table_info(t)",
    "PRAGMA main.synchronous = 0",
    "PRAGMA user_version(5)",
    "PRAGMA user_version = 5",
    "PRAGMA table_info = 3",
  ])("refuses %j", (sql) => {
    expect(() => checkStatementAllowed(sql, "sql")).toThrow(expect.objectContaining({ code: "forbidden" }));
  });

  it.each([
    "select 1",
    "PRAGMA table_info(users)",
    "pragma main.index_list('t')",
    "PRAGMA user_version",
    "PRAGMA integrity_check",
  ])("allows %j", (sql) => {
    expect(() => checkStatementAllowed(sql, "sql")).not.toThrow();
  });
});
