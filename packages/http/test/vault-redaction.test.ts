import { describe, expect, it } from "vitest";
import { casedReflections, reflections } from "./vault-echo.js";
import { LEAK_FORMS, leaksIn, SECRET, withGrantedSecret } from "./vault-helpers.js";

const MARK = "[REDACTED:API_KEY]";

describe("vault: redaction", () => {
  it("redacts the value in every encoded form in the body and in the response headers", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const res = await fetch({ url: `${echo.origin}/reflect`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    const forms = JSON.parse(res.body.body);
    for (const name of ["plain", "base64", "base64url", "url", "url_lower", "form"]) {
      expect(forms[name], name).toBe(MARK);
    }
    // JSON.stringify(secret) is a quoted, escaped string: the escaped value inside is redacted.
    expect(forms.json).toBe(`"${MARK}"`);
    expect(forms.embedded).toBe(`prefix-${MARK}-suffix`);
    // base64("user:" + secret): the secret's bytes sit at an offset inside a longer base64 text.
    expect(forms.basic).toContain(MARK);
    expect(forms.basic.startsWith(Buffer.from("user:").toString("base64").slice(0, 6))).toBe(true);
    expect(res.body.headers["x-plain"]).toBe(MARK);
    expect(res.body.headers["x-b64"]).toBe(MARK);
    expect(res.body.headers["x-url"]).toBe(MARK);
    expect(res.body.headers["set-cookie"]).toEqual([`a=${MARK}`, `b=${MARK}`]);
    expect(leaksIn(JSON.stringify(res.body))).toEqual([]);
    // The upstream did get every one of those forms.
    expect(reflections(SECRET).plain).toBe(SECRET);
  });

  it("redacts the value whatever its letter case, encoded or not, in the body and in header values", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const res = await fetch({ url: `${echo.origin}/reflect-case`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    const forms = JSON.parse(res.body.body) as Record<string, string>;
    expect(Object.keys(forms).sort()).toEqual(Object.keys(casedReflections(SECRET)).sort());
    for (const [name, form] of Object.entries(forms)) {
      if (name.endsWith("_json")) expect(form, name).toBe(`"${MARK}"`);
      else if (name.endsWith("_json_ascii")) expect(form, name).toBe(`"\\"${MARK}\\""`);
      else if (name === "basic_lower") expect(form, name).toContain(MARK);
      else expect(form, name).toBe(MARK);
    }
    expect(res.body.headers["x-upper"]).toBe(MARK);
    expect(res.body.headers["x-lower-b64"]).toBe(MARK);
    expect(leaksIn(JSON.stringify(res.body))).toEqual([]);
    expect(JSON.stringify(res.body).toLowerCase()).not.toContain(SECRET.toLowerCase());
  });

  it("redacts the value in a response header name, which arrives lower-cased", async () => {
    const { fetch, echo, put, grant } = await withGrantedSecret();
    const token = "Tok3nInAHeaderName";
    await put("TOKEN", token);
    await grant({ name: "TOKEN", allow: { hosts: [echo.host] } });
    const res = await fetch({ url: `${echo.origin}/reflect-case`, auth: { bearer: "TOKEN" } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.headers)).toContain("x-[REDACTED:TOKEN]");
    expect(res.text.toLowerCase()).not.toContain(token.toLowerCase());
  });

  it("redacts a header-injected and a query-injected value the same way", async () => {
    const { fetch, echo } = await withGrantedSecret();
    for (const auth of [
      { header: "X-Api-Key", secret: "API_KEY" },
      { query: "key", secret: "API_KEY" },
    ]) {
      const res = await fetch({ url: `${echo.origin}/reflect`, auth });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.body).plain).toBe(MARK);
      expect(JSON.parse(res.body.body).base64).toBe(MARK);
      expect(leaksIn(JSON.stringify(res.body))).toEqual([]);
    }
  });

  it("redacts binary bodies before base64-encoding them", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const res = await fetch({ url: `${echo.origin}/reflect-binary`, auth: { bearer: "API_KEY" } });
    expect(res.body.encoding).toBe("base64");
    const bytes = Buffer.from(res.body.body, "base64");
    expect(bytes).toEqual(
      Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(MARK), Buffer.from([0x80, 0x81])]),
    );
  });

  it("decodes a gzip body so redaction sees it, and drops Content-Encoding", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const res = await fetch({ url: `${echo.origin}/reflect-gzip`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ encoding: "utf8", body: `token=${MARK}; b64=${MARK}` });
    expect(res.body.headers["content-encoding"]).toBeUndefined();
    expect(res.body.headers["content-length"]).toBeUndefined();
    expect(echo.received[0]?.headers["accept-encoding"]).toBe("gzip, deflate, br");
  });

  it("redacts values quoted back in error messages (a redirect naming the secret as a host)", async () => {
    const { fetch, echo, put, grant } = await withGrantedSecret();
    const token = "tok3n4ll0wedinhostnames";
    await put("TOKEN", token);
    await grant({ name: "TOKEN", allow: { hosts: [echo.host] } });
    const to = `http://${token}.example.com/steal`;
    const res = await fetch({ url: `${echo.origin}/redirect?to=${encodeURIComponent(to)}`, auth: { bearer: "TOKEN" } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("secret_policy_denied");
    expect(res.body.error.message).toContain("[REDACTED:TOKEN].example.com");
    expect(res.text).not.toContain(token);
  });

  it("redacts a mixed-case value the URL parser lower-cased in an error message (denied and unresolvable hosts)", async () => {
    const { fetch, echo, put, grant } = await withGrantedSecret();
    const token = "Tok3nAllowedInHostNames";
    await put("TOKEN", token);
    const granted = await grant({ name: "TOKEN", allow: { hosts: [echo.host, "*.prim-test.invalid"] } });
    expect(granted.status, granted.text).toBe(201);
    for (const [to, status] of [
      [`http://${token}.example.com/steal`, 403], // not granted: secret_policy_denied names the host
      [`http://${token}.prim-test.invalid/steal`, 502], // granted, but DNS fails: upstream_error names the host
    ] as const) {
      const res = await fetch({
        url: `${echo.origin}/redirect?to=${encodeURIComponent(to)}`,
        auth: { bearer: "TOKEN" },
      });
      expect(res.status, res.text).toBe(status);
      expect(res.body.error.message).toContain("[REDACTED:TOKEN].");
      expect(res.text.toLowerCase()).not.toContain(token.toLowerCase());
    }
  });

  it("never returns the value for a request that fails half way", async () => {
    const { fetch, echo } = await withGrantedSecret();
    const responses = [
      await fetch({ url: `${echo.origin}/slow`, auth: { bearer: "API_KEY" }, timeout: "100ms" }),
      await fetch({ url: `${echo.origin}/huge`, auth: { bearer: "API_KEY" } }),
      await fetch({
        url: `${echo.origin}/redirect?to=${encodeURIComponent(`/reflect?x=${SECRET}`)}`,
        auth: { bearer: "API_KEY" },
      }),
    ];
    for (const res of responses) expect(leaksIn(res.text)).toEqual([]);
    expect(responses[2]?.status).toBe(200);
    expect(Object.keys(LEAK_FORMS)).toContain("base64");
  });
});
