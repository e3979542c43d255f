import { createHmac } from "node:crypto";
import { invalid, notFound, PRIMITIVE_TYPES, prefixedId, seal, sealingContext, unseal } from "@prim/engine";
import { newWebhookSecret, type WebhookFilter, type WebhookInfo } from "@prim/wire";
import type pg from "pg";
import { findGroup } from "./keys.js";
import { auditedTransaction } from "./workspace-audit.js";

/**
 * Webhook endpoints (issue 42, item 3; CLOUD.md, "Change feeds and webhooks"): a URL that
 * receives one group's (or one primitive's) committed changes, filtered by type, operation and
 * key prefix, signed with the endpoint's own secret (shown once; kept sealed with the master
 * key). Account-level, Pro: apps/api's routes decide who may; this is the rows and their audit
 * (`webhook.create`, `webhook.delete`, `webhook.enable`; `webhook.disable` by the dispatcher).
 */

export type { WebhookFilter, WebhookInfo };

/** Most endpoints a workspace may have. */
export const MAX_WEBHOOKS = 20;
/** Longest URL. */
const MAX_URL = 2048;

const wrappingKey = (masterKey: Buffer) => createHmac("sha256", masterKey).update("prim.webhook-secret.v1").digest();
/** Bound to its endpoint: a secret copied to another endpoint's row does not unseal there. */
const aad = (id: string) => sealingContext("prim webhook secret", id);

interface SealedSecret {
  iv: string;
  tag: string;
  ciphertext: string;
}

function sealSecret(masterKey: Buffer, id: string, secret: string): SealedSecret {
  const sealed = seal(wrappingKey(masterKey), Buffer.from(secret), aad(id));
  return {
    iv: sealed.iv.toString("base64url"),
    tag: sealed.tag.toString("base64url"),
    ciphertext: sealed.ciphertext.toString("base64url"),
  };
}

/** An endpoint's signing secret, or an error naming the master key that does not open it. */
export function openWebhookSecret(masterKey: Buffer, id: string, sealed: SealedSecret): string {
  const plain = unseal(
    wrappingKey(masterKey),
    {
      iv: Buffer.from(sealed.iv, "base64url"),
      tag: Buffer.from(sealed.tag, "base64url"),
      ciphertext: Buffer.from(sealed.ciphertext, "base64url"),
    },
    aad(id),
  );
  if (plain === null) throw new Error(`webhook ${id}: its secret does not unseal with this PRIM_MASTER_KEY`);
  return plain.toString("utf8");
}

/** The URL of an endpoint: absolute https (http only where `allowHttp`, `prim dev`'s and tests'), no credentials. */
export function checkWebhookUrl(text: string, allowHttp: boolean): string {
  if (text.length > MAX_URL) throw invalid(`url: at most ${MAX_URL} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("url: must be an absolute https URL");
  }
  if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) {
    throw invalid("url: must be an absolute https URL");
  }
  if (url.username !== "" || url.password !== "") throw invalid("url: must not carry credentials");
  url.hash = "";
  return url.toString();
}

export function checkWebhookFilter(filter: WebhookFilter | undefined): WebhookFilter | null {
  if (filter === undefined) return null;
  const types = filter.types;
  if (types !== undefined) {
    for (const type of types) {
      if (!(PRIMITIVE_TYPES as readonly string[]).includes(type)) {
        throw invalid(`filter.types: '${type}' is not a primitive type (${PRIMITIVE_TYPES.join(", ")})`);
      }
    }
  }
  const out: WebhookFilter = {};
  if (types !== undefined) out.types = [...new Set(types)];
  if (filter.ops !== undefined) out.ops = [...new Set(filter.ops)];
  if (filter.prefix !== undefined) out.prefix = filter.prefix;
  return Object.keys(out).length === 0 ? null : out;
}

export interface CreateWebhookInput {
  workspace: string;
  /** A group's name or id, for a group's endpoint. */
  group?: string;
  /** A primitive's id (of this workspace), for one primitive's endpoint. */
  primitive?: string;
  url: string;
  filter?: WebhookFilter | null;
  description?: string;
  /** The change feed's cursor to start after (its head when created: only later changes go out). */
  cursor: string | null;
  /** Audit actor: `key:<id>`, `user:<id>`. */
  actor: string;
}

interface EndpointRow {
  id: string;
  url: string;
  group_name: string | null;
  primitive_id: string | null;
  filter: WebhookFilter | null;
  description: string | null;
  created_at: Date;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

const infoOf = (row: EndpointRow): WebhookInfo => ({
  id: row.id,
  url: row.url,
  group: row.group_name,
  primitive: row.primitive_id,
  filter: row.filter,
  description: row.description,
  created_at: row.created_at.getTime(),
  failing_since: row.failing_since?.getTime() ?? null,
  disabled_at: row.disabled_at?.getTime() ?? null,
  disabled_reason: row.disabled_reason,
});

const SELECT_INFO = `SELECT e.id, e.url, g.name AS group_name, e.primitive_id, e.filter, e.description, e.created_at,
        e.failing_since, e.disabled_at, e.disabled_reason
   FROM webhook_endpoints e LEFT JOIN groups g ON g.id = e.group_id`;

/** Resolves the endpoint's subject: exactly one of a group (by name or id) and a primitive of the workspace. */
export async function webhookSubject(
  client: pg.ClientBase,
  workspace: string,
  input: { group?: string; primitive?: string },
): Promise<{ groupId: string | null; primitiveId: string | null; groupName: string }> {
  if ((input.group === undefined) === (input.primitive === undefined)) {
    throw invalid("give one of group and primitive");
  }
  if (input.group !== undefined) {
    const group = await findGroup(client, workspace, input.group);
    return { groupId: group.id, primitiveId: null, groupName: group.name };
  }
  const { rows } = await client.query<{ id: string; group_name: string }>(
    `SELECT p.id, g.name AS group_name FROM primitives p JOIN groups g ON g.id = p.group_id
      WHERE p.id = $1 AND p.workspace_id = $2`,
    [input.primitive, workspace],
  );
  const row = rows[0];
  if (row === undefined) throw notFound(`primitive '${String(input.primitive).slice(0, 64)}'`);
  return { groupId: null, primitiveId: row.id, groupName: row.group_name };
}

/** Creates an endpoint; answers it with its secret, the only time the secret is shown. */
export async function createWebhook(
  pool: pg.Pool,
  masterKey: Buffer,
  input: CreateWebhookInput,
): Promise<WebhookInfo & { secret: string }> {
  const id = prefixedId("whk");
  const secret = newWebhookSecret();
  const filter = checkWebhookFilter(input.filter ?? undefined);
  const description = input.description ?? null;
  if (description !== null && description.length > 200) throw invalid("description: at most 200 characters");
  return auditedTransaction(pool, async (client, record) => {
    // Serialises creates of one workspace, so the count below cannot be raced past.
    await client.query("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", [input.workspace]);
    const subject = await webhookSubject(client, input.workspace, input);
    const count = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_endpoints WHERE workspace_id = $1",
      [input.workspace],
    );
    if ((count.rows[0]?.n ?? 0) >= MAX_WEBHOOKS) {
      throw invalid(`a workspace has at most ${MAX_WEBHOOKS} webhook endpoints; delete one first`);
    }
    await client.query(
      `INSERT INTO webhook_endpoints (id, workspace_id, group_id, primitive_id, url, secret, filter, description, cursor, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        id,
        input.workspace,
        subject.groupId,
        subject.primitiveId,
        input.url,
        JSON.stringify(sealSecret(masterKey, id, secret)),
        filter === null ? null : JSON.stringify(filter),
        description,
        input.cursor,
        input.actor,
      ],
    );
    await record(input.workspace, {
      actor: input.actor,
      action: "webhook.create",
      target: id,
      detail: { url: input.url, group: subject.groupName, primitive: subject.primitiveId, filter },
    });
    const info = await readWebhook(client, input.workspace, id);
    return { ...info, secret };
  });
}

async function readWebhook(client: Pick<pg.ClientBase, "query">, workspace: string, id: string): Promise<WebhookInfo> {
  const { rows } = await client.query<EndpointRow>(`${SELECT_INFO} WHERE e.id = $1 AND e.workspace_id = $2`, [
    id,
    workspace,
  ]);
  const row = rows[0];
  if (row === undefined) throw notFound(`webhook '${id.slice(0, 64)}'`);
  return infoOf(row);
}

export const getWebhook = (pool: pg.Pool, workspace: string, id: string) => readWebhook(pool, workspace, id);

export async function listWebhooks(pool: pg.Pool, workspace: string): Promise<WebhookInfo[]> {
  const { rows } = await pool.query<EndpointRow>(`${SELECT_INFO} WHERE e.workspace_id = $1 ORDER BY e.id`, [workspace]);
  return rows.map(infoOf);
}

/** Deletes an endpoint with its deliveries (another workspace's id: 404). */
export async function deleteWebhook(pool: pg.Pool, workspace: string, id: string, actor: string): Promise<void> {
  await auditedTransaction(pool, async (client, record) => {
    const { rowCount } = await client.query("DELETE FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2", [
      id,
      workspace,
    ]);
    if (rowCount !== 1) throw notFound(`webhook '${id.slice(0, 64)}'`);
    await record(workspace, { actor, action: "webhook.delete", target: id, detail: null });
  });
}

/** Enables a disabled endpoint again: its pending deliveries go out from now (retries start over). */
export async function enableWebhook(pool: pg.Pool, workspace: string, id: string, actor: string): Promise<WebhookInfo> {
  return auditedTransaction(pool, async (client, record) => {
    const { rowCount } = await client.query(
      `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
        WHERE id = $1 AND workspace_id = $2`,
      [id, workspace],
    );
    if (rowCount !== 1) throw notFound(`webhook '${id.slice(0, 64)}'`);
    await client.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now(), attempts = 0 WHERE endpoint_id = $1 AND status = 'pending'`,
      [id],
    );
    await record(workspace, { actor, action: "webhook.enable", target: id, detail: null });
    return readWebhook(client, workspace, id);
  });
}
