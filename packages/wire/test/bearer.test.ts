// The one parser of an incoming `Authorization: Bearer <token>` (RFC 6750 §2.1, RFC 7235 §2.1).
import { describe, expect, it } from "vitest";
import { bearerToken, TOKEN68_RE } from "../src/index.js";

describe("bearerToken", () => {
  it("answers the token68 after the scheme, whatever the scheme's case and the spaces between", () => {
    expect(bearerToken("Bearer pk_live_abc123")).toBe("pk_live_abc123");
    expect(bearerToken("bearer pk_live_abc123")).toBe("pk_live_abc123");
    expect(bearerToken("BEARER   pk_live_abc123")).toBe("pk_live_abc123");
    expect(bearerToken(" Bearer pk_live_abc123 \t")).toBe("pk_live_abc123");
    // Every token68 character, and its `=` padding.
    expect(bearerToken("Bearer aZ09-._~+/==")).toBe("aZ09-._~+/==");
  });

  it("answers nothing for a missing header, another scheme or no token", () => {
    for (const header of [undefined, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearerpk_1", "Token pk_1"]) {
      expect(bearerToken(header), String(header)).toBeUndefined();
    }
  });

  it("answers nothing when the credential is not one token68", () => {
    for (const header of [
      "Bearer two tokens",
      "Bearer pk_1,pk_2",
      "Bearer a=b", // padding only at the end
      "Bearer =abc",
      "Bearer\tpk_1", // the separator is a space (1*SP)
      "Bearer pk_1\n",
      'Bearer "pk_1"',
      "Bearer pk_é",
    ]) {
      expect(bearerToken(header), JSON.stringify(header)).toBeUndefined();
    }
  });

  it("TOKEN68_RE accepts exactly what bearerToken answers", () => {
    expect(TOKEN68_RE.test("sk-live/abc+Q==")).toBe(true);
    expect(TOKEN68_RE.test("has space")).toBe(false);
    expect(TOKEN68_RE.test("a=b")).toBe(false);
  });
});
