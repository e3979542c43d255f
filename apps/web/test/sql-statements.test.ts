// The db console's statement splitter: several statements go to db.batch one by one, cut at the
// semicolons SQLite would end them at — not inside strings, quoted names, comments or a
// trigger's body.
import { describe, expect, it } from "vitest";
import { splitStatements } from "../src/app/(app)/w/[workspace]/data/browsers/db-console/split.js";

describe("splitStatements", () => {
  it("cuts at semicolons between statements and drops empty ones", () => {
    expect(splitStatements("CREATE TABLE t (a);\nINSERT INTO t VALUES (1);;  \nSELECT * FROM t")).toEqual([
      "CREATE TABLE t (a)",
      "INSERT INTO t VALUES (1)",
      "SELECT * FROM t",
    ]);
    expect(splitStatements("SELECT 1;")).toEqual(["SELECT 1"]);
    expect(splitStatements("  ;; -- only a comment\n/* and another; */ ")).toEqual([]);
  });

  it("keeps semicolons inside strings, quoted identifiers and comments", () => {
    expect(splitStatements("INSERT INTO t VALUES ('a;b', 'it''s; fine'); SELECT \"x;y\", `p;q`, [r;s] FROM t")).toEqual(
      ["INSERT INTO t VALUES ('a;b', 'it''s; fine')", 'SELECT "x;y", `p;q`, [r;s] FROM t'],
    );
    expect(splitStatements("SELECT 1 -- no; cut here\n; SELECT /* nor; here */ 2")).toEqual([
      "SELECT 1 -- no; cut here",
      "SELECT /* nor; here */ 2",
    ]);
  });

  it("keeps a trigger's body (with CASE … END inside) in one statement", () => {
    const trigger = `CREATE TEMP TRIGGER log AFTER INSERT ON t BEGIN
  INSERT INTO l VALUES (CASE WHEN new.a > 0 THEN 'pos' ELSE 'neg' END);
  UPDATE c SET n = n + 1;
END`;
    expect(splitStatements(`${trigger};\nINSERT INTO t VALUES (1)`)).toEqual([trigger, "INSERT INTO t VALUES (1)"]);
  });

  it("does not count BEGIN or END outside a trigger", () => {
    expect(splitStatements("SELECT CASE WHEN 1 THEN 2 END; SELECT 3")).toEqual([
      "SELECT CASE WHEN 1 THEN 2 END",
      "SELECT 3",
    ]);
  });
});
