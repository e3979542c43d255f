// Where the dashboard sends a browser after sign-in (`?next=`): a path on this site, never
// another origin — however the browser's URL parser reads it.
import { describe, expect, it } from "vitest";
import { safeNext } from "../src/lib/safe-next";

const SITE = "https://dash.prim.test";

/** Where a browser on the dashboard lands when sent to `next`. */
const landsOn = (next: string) => new URL(next, SITE).origin;

describe("safeNext", () => {
  it.each(["/", "/w/ws_1", "/invite/inv_abc?x=1#top", "/oauth/consent/uid%2F1"])(
    "keeps a path on this site: %s",
    (next) => {
      expect(safeNext(next)).toBe(next);
      expect(landsOn(safeNext(next))).toBe(SITE);
    },
  );

  it.each([
    "/\\evil.test",
    "/\\/evil.test",
    "\\\\evil.test",
    "//evil.test",
    "/\t/evil.test",
    "/\n/evil.test",
    "https://evil.test/",
    "javascript:alert(1)",
    "evil.test",
    "",
  ])("refuses what leaves the site: %j", (next) => {
    expect(safeNext(next)).toBe("/");
  });

  it("never answers a path that resolves off-site", () => {
    for (const next of ["/\\evil.test", "/\t/evil.test", "/%5Cevil.test", "/%2F%2Fevil.test"]) {
      expect(landsOn(safeNext(next))).toBe(SITE);
    }
  });

  it("falls back to the workspaces for nothing", () => {
    expect(safeNext(undefined)).toBe("/");
    expect(safeNext(null)).toBe("/");
  });
});
