import { notFound } from "@prim/wire";
import { z } from "zod";
import { durationString } from "../../core/duration.js";
import { decodeCursor, LIST_PAGE, limitSchema, type Page, toPage } from "../../core/pagination.js";
import type { AnyOperation } from "../operation.js";
import { vaultFetch } from "./fetch-op.js";
import { hostsSchema, normalizeHosts } from "./grant-hosts.js";
import { boundStore, vaultOp } from "./handle.js";
import { checkSecretSize, methodSchema, secretNameSchema } from "./limits.js";
import { REQUEST_OPERATIONS } from "./request-ops.js";
import type { Grant, SecretInfo, SecretListing } from "./store.js";

const pageInput = { limit: limitSchema(LIST_PAGE), cursor: z.string().optional() };
const cursorSchema = z.object({ n: z.string() });

/** A page of rows named in order, after the cursor's name (`limit + 1` rows tell a next page). */
function pageByName<R extends { name: string }>(
  input: { limit: number; cursor?: string | undefined },
  list: (after: string, limit: number) => R[],
): Page<R> {
  const after = input.cursor === undefined ? "" : decodeCursor(input.cursor, cursorSchema).n;
  return toPage(
    list(after, input.limit + 1),
    input.limit,
    (r) => r,
    (r) => ({ n: r.name }),
  );
}

export const vaultPut = vaultOp({
  name: "vault.put",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: true,
  accountOnly: true,
  input: z.strictObject({ name: secretNameSchema, value: z.string().min(1, "must not be empty") }),
  run(ctx, input): SecretInfo {
    ctx.audit.target = input.name;
    checkSecretSize(input.value);
    const info = boundStore(ctx).put(input.name, input.value);
    ctx.audit.detail = { version: info.version };
    return info;
  },
});

export const vaultDelete = vaultOp({
  name: "vault.delete",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  accountOnly: true,
  input: z.strictObject({ name: secretNameSchema }),
  run(ctx, input): void {
    ctx.audit.target = input.name;
    if (!boundStore(ctx).delete(input.name)) throw notFound(`secret '${input.name}'`);
  },
});

export const vaultList = vaultOp({
  name: "vault.list",
  access: "read",
  writesStorage: false,
  tool: "vault_list",
  input: z.strictObject(pageInput),
  run(ctx, input): Page<SecretListing> {
    return pageByName(input, (after, limit) => boundStore(ctx).list(after, limit));
  },
});

export const vaultGrant = vaultOp({
  name: "vault.grant",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  accountOnly: true,
  input: z.strictObject({
    name: secretNameSchema,
    allow: z.strictObject({
      hosts: hostsSchema,
      methods: z.array(methodSchema).min(1, "must name at least one method (leave it out for all)").optional(),
    }),
    ttl: durationString.optional(),
  }),
  run(ctx, input): Grant {
    ctx.audit.target = input.name;
    const hosts = normalizeHosts(input.allow.hosts);
    const methods = input.allow.methods === undefined ? null : [...new Set(input.allow.methods)];
    const expires_at = input.ttl === undefined ? null : ctx.services.clock.now() + input.ttl;
    const grant = boundStore(ctx).setGrant(input.name, { hosts, methods, expires_at });
    if (grant === null) throw notFound(`secret '${input.name}'`);
    ctx.audit.detail = { hosts, methods, expires_at };
    return grant;
  },
});

export const vaultGrants = vaultOp({
  name: "vault.grants",
  access: "read",
  writesStorage: false,
  tool: "vault_list",
  input: z.strictObject(pageInput),
  run(ctx, input): Page<Grant> {
    return pageByName(input, (after, limit) => boundStore(ctx).listGrants(after, limit));
  },
});

export const vaultRevoke = vaultOp({
  name: "vault.revoke",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  accountOnly: true,
  input: z.strictObject({ name: secretNameSchema }),
  run(ctx, input): void {
    ctx.audit.target = input.name;
    if (!boundStore(ctx).deleteGrant(input.name)) throw notFound(`grant of secret '${input.name}'`);
  },
});

export const VAULT_OPERATIONS: readonly AnyOperation[] = [
  vaultPut,
  vaultDelete,
  vaultList,
  vaultGrant,
  vaultGrants,
  vaultRevoke,
  vaultFetch,
  ...REQUEST_OPERATIONS,
];
