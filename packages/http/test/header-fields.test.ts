// Fields that end up in an HTTP header (a presigned upload's Content-Type, an object's
// Content-Type and metadata, vault fetch headers) refuse control characters with 400
// invalid_request, whichever way they arrive (REST JSON body, or the engine call MCP makes), and
// nothing is stored.
import { LOCAL_PRINCIPAL } from "@prim/engine";
import { describe, expect, it } from "vitest";
import { withStorage } from "./storage-helpers.js";
import { withGrantedSecret } from "./vault-helpers.js";

const HOSTILE = [
  "text/plain\r\nX-Injected: 1",
  "text/plain\nX-Injected: 1",
  "text/plain\r",
  "text/\u0000plain",
  "text/plain\u007f",
  "text/plain\ttab",
  "text/plain; name=\u2192", // past U+00FF: a header cannot carry it
];

async function* bytes(text: string): AsyncIterable<Buffer> {
  yield Buffer.from(text);
}

describe("header-bound fields", () => {
  it("presign refuses a content_type with control characters; a normal one still works", async () => {
    const server = await withStorage();
    for (const contentType of HOSTILE) {
      const res = await server.api("POST", `${server.base}/presign`, {
        key: "upload.txt",
        method: "PUT",
        content_type: contentType,
      });
      expect(res.status, JSON.stringify(contentType)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toContain("content_type");
    }
    const ok = await server.api("POST", `${server.base}/presign`, {
      key: "upload.txt",
      method: "PUT",
      content_type: "text/plain; charset=utf-8",
    });
    expect(ok.status).toBe(200);
    expect(ok.body.headers).toEqual({ "Content-Type": "text/plain; charset=utf-8" });
  });

  it("an object write (as MCP's storage_write makes it) refuses them in content_type and metadata", async () => {
    const server = await withStorage();
    const put = (input: Record<string, unknown>) =>
      server.engine
        .invoke(LOCAL_PRINCIPAL, "storage.put", server.store.id, { key: "o", body: bytes("x"), ...input })
        .then(
          () => "stored",
          (err) => (err as { code: string }).code,
        );
    for (const bad of HOSTILE) {
      expect(await put({ content_type: bad }), JSON.stringify(bad)).toBe("invalid_request");
      expect(await put({ metadata: { note: bad } }), JSON.stringify(bad)).toBe("invalid_request");
    }
    expect((await server.get("o")).status).toBe(404); // nothing was stored
    expect(await put({ content_type: "text/plain", metadata: { note: "caf\u00e9 ok" } })).toBe("stored");
    const res = await server.get("o");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain");
  });

  it("vault fetch refuses control characters in header names and values", async () => {
    const { fetch, echo } = await withGrantedSecret();
    for (const headers of [
      { "x-note": "a\r\nx-injected: 1" },
      { "x-note": "a\u0000b" },
      { "x-note\r\nx-injected": "1" },
      { "x-n\u0000ote": "1" },
    ]) {
      const res = await fetch({ url: `${echo.origin}/echo`, auth: { bearer: "API_KEY" }, headers });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    expect(echo.received).toEqual([]); // nothing was sent
  });
});
