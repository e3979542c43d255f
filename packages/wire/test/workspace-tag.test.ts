import { describe, expect, it } from "vitest";
import { credentialTag, isAccessTokenShape, isApiKeyShape, keyStart, workspaceTag } from "../src/index.js";

const TAG = "01jz8x4k2m5n6p7q8r9s0t1v2w";
const SECRET = "CDvhKezyVe9U7dDLBYwPdd4WUQvD8zuFL";

describe("workspace tags", () => {
  it("are a ws_<ulid> id's ulid; other ids have none", () => {
    expect(workspaceTag(`ws_${TAG}`)).toBe(TAG);
    for (const id of ["local", "", `ws_${TAG.toUpperCase()}`, `ws_${TAG}0`, `key_${TAG}`, TAG]) {
      expect(workspaceTag(id)).toBeNull();
    }
  });

  it("are read from tagged keys and access tokens, never from untagged ones", () => {
    expect(credentialTag(`pk_${TAG}_${SECRET}`)).toBe(TAG);
    expect(credentialTag(`po_${TAG}_${"a_-".repeat(14)}b`)).toBe(TAG);
    // Untagged: a key made before tags, an access token whose random part has a `_` where a tag would end.
    expect(credentialTag(`pk_${SECRET}`)).toBeNull();
    expect(credentialTag(`po_${TAG}_${"x".repeat(16)}`)).toBeNull();
    expect(isAccessTokenShape(`po_${TAG}_${"x".repeat(16)}`)).toBe(true); // 43 url-safe characters
    expect(credentialTag(`pa_${"0".repeat(32)}.x.y`)).toBeNull();
  });

  it("leave both formats valid shapes and refuse near misses", () => {
    expect(isApiKeyShape(`pk_${TAG}_${SECRET}`)).toBe(true);
    expect(isApiKeyShape(`pk_${SECRET}`)).toBe(true);
    for (const bad of [`pk_${TAG}_`, `pk_${TAG}__${SECRET}`, `pk_${TAG}_${SECRET}_`, `pk_${TAG.slice(1)}_${SECRET}`]) {
      expect(isApiKeyShape(bad), bad).toBe(false);
    }
  });

  it("leave the display start to the secret: pk_ and its first 5 characters", () => {
    expect(keyStart(`pk_${TAG}_${SECRET}`)).toBe("pk_CDvhK");
    expect(keyStart(`pk_${SECRET}`)).toBe("pk_CDvhK");
  });
});
