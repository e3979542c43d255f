// The data browser's JSON editors: JSON.parse's answer, or the first error with its line and column.
import { describe, expect, it } from "vitest";
import { jsonBytes, parseJson, pretty } from "../src/app/(app)/w/[workspace]/data/browsers/json-text";

describe("parseJson", () => {
  it("parses what JSON.parse parses", () => {
    for (const text of ['{"a": [1, 2.5e3, "x\\u00e9"], "b": null}', "42", '"s"', "true", " [ ] ", "-0.5"]) {
      expect(parseJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
    }
  });

  it("places the first error at its line and column", () => {
    expect(parseJson('{"name": "Ada",\n  "tags": [a]}')).toMatchObject({ ok: false, line: 2, column: 12 });
    expect(parseJson("{name: 1}")).toMatchObject({
      ok: false,
      line: 1,
      column: 2,
      message: "Expected a property name in double quotes",
    });
    expect(parseJson('{"a": 1,}')).toMatchObject({ ok: false, column: 9 });
    expect(parseJson("[1, 2\n, 3")).toMatchObject({
      ok: false,
      line: 2,
      column: 4,
      message: "Unexpected end of input",
    });
    expect(parseJson('"a\tb"')).toMatchObject({ ok: false, column: 3 });
    expect(parseJson("1 2")).toMatchObject({ ok: false, column: 3 });
    expect(parseJson("")).toMatchObject({ ok: false, line: 1, column: 1 });
  });

  it("formats and sizes values as the engine stores them", () => {
    expect(pretty({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(jsonBytes({ é: 1 })).toBe(Buffer.byteLength('{"é":1}'));
  });
});
