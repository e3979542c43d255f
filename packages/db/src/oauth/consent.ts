import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { invalid, notFound, ServiceError } from "@prim/engine";
import type pg from "pg";
import { checkTools, findGroup } from "../control/keys.js";
import { membership } from "../control/members.js";
import { consentTools } from "./consent-form.js";
import { hashId } from "./store.js";

const forbidden = (message: string) => new ServiceError("forbidden", message);

/** How long a signed consent result may wait before the authorization server takes it. */
export const CONSENT_RESULT_TTL_MS = 2 * 60_000;

/** What the user decided on the consent screen for one interaction (CLOUD.md, "OAuth for MCP"). */
export type ConsentDecision =
  | { action: "deny"; uid: string; user: string }
  | {
      action: "allow";
      uid: string;
      user: string;
      workspace: string;
      group: string;
      tools: string[];
      /** The screen's "every tool" choice: grants `*` (consent-form.ts). */
      everyTool?: boolean;
      /** The screen's "Read-only" choice: the connection (and so its tokens) can only read. */
      readOnly?: boolean;
    };

/** A decision as signed: the group resolved to its id, a nonce (single use) and an expiry. */
export type ConsentResult = ConsentDecision & { nonce: string; exp: number };

/** The key that signs consent results, derived from the secret every process shares. */
function consentKey(secret: string): Buffer {
  return createHmac("sha256", secret).update("prim oauth consent result v1").digest();
}

const b64 = (data: Buffer | string) => Buffer.from(data).toString("base64url");

function sign(secret: string, body: string): string {
  return b64(createHmac("sha256", consentKey(secret)).update(body).digest());
}

/** Roles that may connect an app to a workspace's data (billing sees plans and invoices only). */
const CONNECTING_ROLES = new Set(["owner", "admin", "member"]);

/**
 * The dashboard's half of the challenge pattern: checks what the user chose (tools of `catalog`,
 * every MCP tool's name — `consentTools`; a member of the workspace with a data role, a group of
 * that workspace) and answers the signed, short-lived, single-use result the browser carries
 * back to the authorization server. A denial is signed too, so the server can end the
 * interaction with `access_denied`.
 */
export async function signConsent(
  pool: pg.Pool,
  secret: string,
  decision: ConsentDecision,
  options: { catalog: readonly string[]; now?: number },
): Promise<string> {
  const now = options.now ?? Date.now();
  let result: ConsentResult;
  if (decision.action === "allow") {
    const { everyTool, ...chosen } = decision;
    const tools = consentTools(chosen.tools, everyTool === true, options.catalog);
    const checked = await checkConsent(pool, { ...chosen, tools });
    result = {
      ...chosen,
      tools,
      group: checked.groupId,
      nonce: b64(randomBytes(16)),
      exp: now + CONSENT_RESULT_TTL_MS,
    };
  } else {
    result = { ...decision, nonce: b64(randomBytes(16)), exp: now + CONSENT_RESULT_TTL_MS };
  }
  const body = b64(JSON.stringify(result));
  return `${body}.${sign(secret, body)}`;
}

/**
 * Checks an allow decision against the control plane (again at the authorization server: the
 * membership may have ended in between). Answers the group's id.
 */
export async function checkConsent(
  pool: pg.Pool,
  decision: { user: string; workspace: string; group: string; tools: readonly string[] },
): Promise<{ groupId: string; role: string }> {
  const role = (await membership(pool, decision.workspace, decision.user))?.role;
  // Not a member: the workspace is not found for this user (nothing learned about it).
  if (role === undefined) throw notFound(`workspace '${decision.workspace}'`);
  if (!CONNECTING_ROLES.has(role)) throw forbidden(`role '${role}' cannot connect apps to this workspace's data`);
  if (decision.tools.length === 0) throw invalid("tools: choose at least one tool");
  checkTools(decision.tools);
  const group = await findGroup(pool, decision.workspace, decision.group);
  return { groupId: group.id, role };
}

/**
 * The authorization server's half: verifies the signature, the expiry and the binding to this
 * interaction, then spends the nonce (a second use of the same result is refused).
 */
export async function acceptConsent(
  pool: pg.Pool,
  secret: string,
  token: string,
  uid: string,
  now = Date.now(),
): Promise<ConsentResult> {
  const [body, mac, extra] = token.split(".");
  if (body === undefined || mac === undefined || extra !== undefined) throw invalid("consent result: malformed");
  const expected = Buffer.from(sign(secret, body));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw forbidden("consent result: bad signature");
  }
  const result = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as ConsentResult;
  if (result.uid !== uid) throw forbidden("consent result: issued for another interaction");
  if (!(result.exp > now)) throw forbidden("consent result: expired");
  const spent = await pool.query(
    `INSERT INTO oauth_store (model, id_hash, payload, expires_at)
     VALUES ('ConsentResult', $1, '{}', $2) ON CONFLICT DO NOTHING`,
    [hashId(result.nonce), new Date(result.exp + 60_000)],
  );
  if (spent.rowCount === 0) throw forbidden("consent result: already used");
  // Decided: the consent screen has nothing more to show for it.
  await pool.query("DELETE FROM oauth_store WHERE model = 'PendingConsent' AND id_hash = $1", [hashId(uid)]);
  return result;
}

/** What the consent screen shows about a pending authorization. */
export interface PendingAuthorization {
  uid: string;
  client_id: string;
  client_name: string | null;
  redirect_uri: string;
  resource: string | null;
  expires_at: number;
}

/**
 * Records what the consent screen will show (the authorization server, when it sends the
 * browser to the dashboard): the client as it resolved it (registered or by its metadata
 * document), for as long as the interaction lives.
 */
export async function savePendingAuthorization(pool: pg.Pool, pending: PendingAuthorization): Promise<void> {
  await pool.query(
    `INSERT INTO oauth_store (model, id_hash, payload, expires_at) VALUES ('PendingConsent', $1, $2, $3)
     ON CONFLICT (model, id_hash) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at`,
    [hashId(pending.uid), JSON.stringify({ ...pending, uid: undefined }), new Date(pending.expires_at)],
  );
}

/**
 * The authorization waiting for consent under `uid` (the consent screen's GET); 404
 * `not_found` once it has expired or is unknown.
 */
export async function describeAuthorization(pool: pg.Pool, uid: string): Promise<PendingAuthorization> {
  const { rows } = await pool.query<{ payload: Omit<PendingAuthorization, "uid"> }>(
    `SELECT payload FROM oauth_store WHERE model = 'PendingConsent' AND id_hash = $1 AND expires_at > now()`,
    [hashId(uid)],
  );
  const row = rows[0];
  if (row === undefined) throw notFound(`authorization '${uid}'`);
  return { uid, ...row.payload };
}
