import type { IncomingHttpHeaders } from "node:http";
import { TextDecoder } from "node:util";
import type { FetchResult } from "@prim/wire";
import { isServiceError, notFound, ServiceError } from "@prim/wire";
import { z } from "zod";
import { durationString } from "../../core/duration.js";
import { boundStore, vaultOp } from "./handle.js";
import { canonicalHost } from "./hosts.js";
import { DEFAULT_FETCH_TIMEOUT_MS, MAX_FETCH_TIMEOUT_MS, methodSchema } from "./limits.js";
import { sendOutbound } from "./outbound.js";
import { Redactor } from "./redact.js";
import {
  authSchema,
  checkHeaders,
  checkInjectable,
  grantCheck,
  injectionOf,
  parseTargetUrl,
  requestBody,
} from "./request.js";
import { needsValue } from "./store.js";

export type { FetchResult };

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function encodeBody(bytes: Buffer): Pick<FetchResult, "body" | "encoding"> {
  try {
    return { body: utf8.decode(bytes), encoding: "utf8" };
  } catch {
    return { body: bytes.toString("base64"), encoding: "base64" };
  }
}

function redactHeaders(headers: IncomingHttpHeaders, redactor: Redactor): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[redactor.header(name)] = Array.isArray(value) ? value.map((v) => redactor.header(v)) : redactor.header(value);
  }
  return out;
}

/**
 * Errors leave through here once the value is known: their messages may quote a host or URL an
 * upstream chose (a redirect to `https://<secret>.example/`), so they are redacted too, and
 * anything that is not a ServiceError loses its message entirely.
 */
function redactedError(err: unknown, redactor: Redactor): ServiceError {
  if (!isServiceError(err)) return new ServiceError("internal_error", "internal error; safe to retry");
  return new ServiceError(err.code, redactor.text(err.message), { status: err.status, headers: { ...err.headers } });
}

export const vaultFetch = vaultOp({
  name: "vault.fetch",
  // It acts outside with a secret, and any method may change something there.
  access: "write",
  destructive: true,
  idempotent: false,
  openWorld: true,
  writesStorage: false,
  tool: "vault_use",
  input: z.strictObject({
    url: z.string(),
    auth: authSchema,
    method: methodSchema.default("GET"),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional(),
    timeout: durationString.refine((ms) => ms <= MAX_FETCH_TIMEOUT_MS, `at most ${MAX_FETCH_TIMEOUT_MS} ms`).optional(),
  }),
  async run(ctx, input): Promise<FetchResult> {
    const { name, injection } = injectionOf(input.auth);
    ctx.audit.target = name;
    const url = parseTargetUrl(input.url);
    const audit: Record<string, unknown> = { secret: name, host: canonicalHost(url), method: input.method };
    ctx.audit.detail = audit;
    const headers = checkHeaders(input.headers, injection);
    const body = requestBody(input.body, input.method, headers);

    const store = boundStore(ctx);
    if (!store.exists(name)) throw notFound(`secret '${name}'`);
    if (store.needsValue(name)) throw needsValue(name);
    const authorize = grantCheck(store, ctx.services.clock, name);
    authorize(url, input.method); // refuse before the value is even decrypted
    const value = store.reveal(name);
    if (value === null) throw notFound(`secret '${name}'`);
    const redactor = new Redactor(value, name);
    audit.host = redactor.text(String(audit.host));
    try {
      checkInjectable(value, name, injection);
      const res = await sendOutbound({
        url,
        method: input.method,
        headers,
        body,
        secret: value,
        injection,
        authorize,
        allowLoopback: ctx.store.allowLoopbackFetch,
        timeoutMs: input.timeout ?? DEFAULT_FETCH_TIMEOUT_MS,
        signal: ctx.signal,
      });
      audit.status = res.status;
      const result: FetchResult = {
        status: res.status,
        headers: redactHeaders(res.headers, redactor),
        ...encodeBody(redactor.bytes(res.body)),
      };
      // Fail closed should a form slip past redaction (short values would match JSON syntax).
      if (
        value.length >= 8 &&
        JSON.stringify([result.headers, result.body]).toLowerCase().includes(value.toLowerCase())
      ) {
        throw new ServiceError("upstream_error", `the upstream response could not be redacted`);
      }
      return result;
    } catch (err) {
      throw redactedError(err, redactor);
    }
  },
});
