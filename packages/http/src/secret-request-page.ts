import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { type Invoker, type PrimitiveInfo, type Principal, type SecretRequest, toServiceError } from "@prim/engine";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ROOT_PRINCIPAL } from "./local-auth.js";

/** Where the local engine serves the page a person answers a secret request on. */
export const SECRET_REQUEST_PAGE = "/secret-requests";

/** A form carries a value (≤ 64 KiB, the secret limit) and a few short fields; larger bodies are refused. */
const FORM_BODY_LIMIT = 200 * 1024;

/**
 * Nothing on the page runs or loads: no script, no image, no frame; the form posts only here.
 * The agent's words (reason, name) are escaped text, and even an escape bug could not run code.
 */
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface PageOptions {
  /** The engine's root token: then the form asks for it too (a browser sends no Bearer header). */
  rootToken?: string | undefined;
}

type Params = { primitive: string; request: string };

/**
 * The local engine's page for a secret request (`vault_request_secret` on `prim dev`): GET shows
 * who asked, for which secret, why and with which grant; a form POST sets the value (straight
 * into the vault, never echoed) or declines. Local auth applies (localhost only, cross-site
 * refused); each form also carries a token bound to the request (an HMAC under a key of this
 * process), so a page elsewhere cannot post an answer, and with a root token the form asks for it.
 */
export function mountSecretRequestPage(app: FastifyInstance, invoker: Invoker, options: PageOptions = {}): void {
  const key = randomBytes(32);
  const formToken = (p: Params) => createHmac("sha256", key).update(`${p.primitive}\n${p.request}`).digest("base64url");
  const rootToken = options.rootToken;
  // With a root token, the visitor is `PAGE_VISITOR` (no rights): reading the request is done
  // as the root token, answering only once the form carried it.
  const principalFor = (req: FastifyRequest): Principal => (rootToken === undefined ? req.principal : ROOT_PRINCIPAL);

  const render = async (req: FastifyRequest, reply: FastifyReply, status: number, notice: Notice | null) => {
    const params = req.params as Params;
    const principal = principalFor(req);
    let request: SecretRequest;
    let vault: PrimitiveInfo;
    try {
      request = await invoker.invoke<SecretRequest>(principal, "vault.request_get", params.primitive, {
        request: params.request,
      });
      vault = await invoker.invoke<PrimitiveInfo>(principal, "primitive.get", params.primitive, {});
    } catch (err) {
      const error = toServiceError(err);
      return send(reply, error.status, page("Secret request", `<p class="error">${escapeHtml(error.message)}</p>`));
    }
    const body = requestView(request, vault, notice, formToken(params), rootToken !== undefined);
    return send(reply, status, page(`Set ${request.name}`, body));
  };

  app.register(async (scope) => {
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: FORM_BODY_LIMIT },
      (_req, body, done) => done(null, new URLSearchParams(body as string)),
    );
    const path = `${SECRET_REQUEST_PAGE}/:primitive/:request`;
    scope.get(path, (req, reply) => render(req, reply, 200, null));
    scope.post(path, async (req, reply) => {
      const params = req.params as Params;
      const form = req.body instanceof URLSearchParams ? req.body : new URLSearchParams();
      if (!same(form.get("form_token") ?? "", formToken(params))) {
        return render(req, reply, 403, { error: "This form is not from this page: open the link again." });
      }
      if (rootToken !== undefined && !same(form.get("root_token") ?? "", rootToken)) {
        return render(req, reply, 401, { error: "Wrong root token: it is the token this engine was started with." });
      }
      const principal = principalFor(req);
      const action = form.get("action");
      try {
        if (action === "set") {
          await invoker.invoke(principal, "vault.request_fulfil", params.primitive, {
            request: params.request,
            value: form.get("value") ?? "",
          });
          return render(req, reply, 200, { done: "set" });
        }
        if (action === "decline") {
          await invoker.invoke(principal, "vault.request_decline", params.primitive, { request: params.request });
          return render(req, reply, 200, { done: "declined" });
        }
        return render(req, reply, 400, { error: "Choose Set or Decline." });
      } catch (err) {
        const error = toServiceError(err);
        // The engine's messages name fields and sizes, never the value.
        return render(req, reply, error.status, { error: error.message });
      }
    });
  });
}

type Notice = { error: string } | { done: "set" | "declined" };

function same(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function send(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("content-security-policy", CSP)
    .header("x-frame-options", "DENY")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("cache-control", "no-store")
    .send(html);
}

function requestView(
  request: SecretRequest,
  vault: PrimitiveInfo,
  notice: Notice | null,
  token: string,
  askRootToken: boolean,
): string {
  const e = escapeHtml;
  const grant =
    request.allow === null
      ? "<dd>None proposed: the secret can be used once an account grants hosts.</dd>"
      : `<dd>May be sent to <code>${request.allow.hosts.map(e).join("</code>, <code>")}</code>${
          request.allow.methods === null ? "" : ` with ${request.allow.methods.map(e).join(", ")}`
        }</dd>`;
  const facts = `<dl>
<dt>Secret</dt><dd><code>${e(request.name)}</code> in vault <code>${e(vault.name)}</code> (group <code>${e(vault.group)}</code>)</dd>
<dt>Asked by</dt><dd><code>${e(request.requested_by)}</code></dd>
<dt>Its reason (the agent's words)</dt><dd><blockquote>${e(request.reason)}</blockquote></dd>
<dt>Grant set with it</dt>${grant}
<dt>Expires</dt><dd>${e(new Date(request.expires_at).toISOString())}</dd>
</dl>`;
  const message =
    notice === null
      ? ""
      : "error" in notice
        ? `<p class="error" role="alert">${e(notice.error)}</p>`
        : `<p class="done" role="status">${notice.done === "set" ? `Secret ${e(request.name)} is set (version ${request.version ?? "?"}). You can close this tab.` : "Declined: nothing was stored. You can close this tab."}</p>`;
  if (request.status !== "pending") {
    const state =
      notice !== null && "done" in notice
        ? ""
        : `<p class="done" role="status">This request is ${e(request.status)}; it cannot be answered again.</p>`;
    return `${message}${state}${facts}`;
  }
  const root = askRootToken
    ? `<label for="root_token">Root token of this engine</label><input id="root_token" name="root_token" type="password" autocomplete="off" required>`
    : "";
  return `${message}${facts}
<form method="post">
<input type="hidden" name="form_token" value="${e(token)}">
<label for="value">Value of ${e(request.name)}</label>
<input id="value" name="value" type="password" autocomplete="off" spellcheck="false">
${root}
<p class="hint">The value goes straight into the vault; the agent never sees it. Only set it if you expected this request.</p>
<div class="actions"><button type="submit" name="action" value="set">Set secret</button>
<button type="submit" name="action" value="decline" formnovalidate class="secondary">Decline</button></div>
</form>`;
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)} · Prim</title>
<style>
:root{color-scheme:light dark;font-family:system-ui,sans-serif}
body{max-width:36rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
dt{font-weight:600;margin-top:.75rem}dd{margin:0}blockquote{margin:0;padding:.25rem .75rem;border-left:3px solid #999;white-space:pre-wrap;overflow-wrap:anywhere}
code{overflow-wrap:anywhere}label{display:block;font-weight:600;margin-top:1rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;margin-top:.25rem}
.actions{display:flex;gap:.5rem;margin-top:1rem}button{padding:.5rem 1rem;font:inherit;cursor:pointer}
.error{color:#b00020}.done{font-weight:600}.hint{font-size:.875rem;opacity:.8}
</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}
