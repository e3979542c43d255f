import { notFound, ServiceError } from "@prim/wire";
import { z } from "zod";
import type { AnyOperation } from "../operation.js";
import { hostsSchema, normalizeHosts } from "./grant-hosts.js";
import { boundStore, vaultOp } from "./handle.js";
import { checkSecretSize, methodSchema, secretNameSchema } from "./limits.js";
import {
  MAX_PENDING_REQUESTS,
  MAX_REASON_CHARS,
  SECRET_REQUEST_ID_RE,
  type SecretRequest,
  type SecretRequests,
  type StoredRequest,
} from "./requests.js";

/** Longest a `vault.request_get` waits (the same bound as a queue receive's long poll). */
export const MAX_REQUEST_WAIT_MS = 30_000;

const requestId = z.string().regex(SECRET_REQUEST_ID_RE, "must be a secret request id (sreq_…)");

/** Controls (but line feed) and bidirectional overrides: a reason shown to a person must not hide or reorder text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find them
const HIDDEN_CHARS_RE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Printable text and line breaks only: the reason is shown to a person as the agent's words. */
const reasonSchema = z
  .string()
  .trim()
  .min(1, "must say why the secret is needed")
  .max(MAX_REASON_CHARS, `at most ${MAX_REASON_CHARS} characters`)
  .refine((text) => !HIDDEN_CHARS_RE.test(text), {
    message: "must not contain control or bidirectional formatting characters",
  });

function find(requests: SecretRequests, id: string): StoredRequest {
  const request = requests.get(id);
  if (request === null) throw notFound(`secret request '${id}'`);
  return request;
}

/** 409 for a request that is no longer pending: each request is answered at most once. */
const answeredAlready = (request: StoredRequest) =>
  new ServiceError(
    "conflict",
    `secret request '${request.id}' is ${request.status}; it cannot be answered again (ask for a new one)`,
  );

/**
 * An agent asks a person to store a secret (`vault_request_secret`): a pending request with the
 * secret's name, the agent's reason and the grant it proposes, answered by a person on a page
 * within 15 minutes. Asking needs only the tool; answering is account-level (storing a secret).
 */
export const vaultRequest = vaultOp({
  name: "vault.request",
  access: "write",
  destructive: false,
  idempotent: false,
  // A bounded row (purged a day after its answer); the value itself is stored by the answer.
  writesStorage: false,
  tool: "vault_request_secret",
  input: z.strictObject({
    name: secretNameSchema,
    reason: reasonSchema,
    allow: z
      .strictObject({
        hosts: hostsSchema,
        methods: z.array(methodSchema).min(1, "must name at least one method (leave it out for all)").optional(),
      })
      .optional(),
  }),
  run(ctx, input): SecretRequest {
    ctx.audit.target = input.name;
    const allow =
      input.allow === undefined
        ? null
        : {
            hosts: normalizeHosts(input.allow.hosts),
            methods: input.allow.methods === undefined ? null : [...new Set(input.allow.methods)],
          };
    const request = ctx.store.requests.create({
      name: input.name,
      reason: input.reason,
      allow,
      requested_by: ctx.principal.actor,
    });
    if (request === "full") {
      throw new ServiceError(
        "conflict",
        `this vault has ${MAX_PENDING_REQUESTS} secret requests waiting for an answer; wait for some to be answered or to expire`,
      );
    }
    ctx.audit.detail = { request: request.id, expires_at: request.expires_at, allow };
    return { ...request, primitive: ctx.primitive.id };
  },
});

/** A request as it stands; with `wait` (ms), a long poll that answers as soon as it is no longer pending. */
export const vaultRequestGet = vaultOp({
  name: "vault.request_get",
  access: "read",
  writesStorage: false,
  tool: "vault_request_secret",
  // A status read, like a lookup: the tool call that asked is what counts and is audited.
  metered: false,
  audited: false,
  input: z.strictObject({
    request: requestId,
    wait: z.number().int().min(0).max(MAX_REQUEST_WAIT_MS).default(0),
  }),
  async run(ctx, input): Promise<SecretRequest> {
    ctx.audit.target = input.request;
    const request = await ctx.store.requests.wait(input.request, input.wait, ctx.signal);
    if (request === null) throw notFound(`secret request '${input.request}'`);
    return { ...request, primitive: ctx.primitive.id };
  },
});

/**
 * A person answers with the value: stored as the secret (a new version), with the proposed grant,
 * in one transaction with the answer. Account-level, like `vault.put`. The value is never in the
 * result or the audit entry.
 */
export const vaultRequestFulfil = vaultOp({
  name: "vault.request_fulfil",
  access: "write",
  destructive: true,
  idempotent: false,
  writesStorage: true,
  accountOnly: true,
  input: z.strictObject({ request: requestId, value: z.string().min(1, "must not be empty") }),
  run(ctx, input): SecretRequest {
    const { requests } = ctx.store;
    const request = find(requests, input.request);
    ctx.audit.target = request.name;
    if (request.status !== "pending") throw answeredAlready(request);
    checkSecretSize(input.value);
    const store = boundStore(ctx);
    const version = requests.atomically(() => {
      const info = store.put(request.name, input.value);
      if (request.allow !== null) store.setGrant(request.name, { ...request.allow, expires_at: null });
      if (!requests.answer(request.id, "set", ctx.principal.actor, info.version)) {
        throw answeredAlready(find(requests, request.id));
      }
      return info.version;
    });
    requests.answered(request.id);
    ctx.audit.detail = { request: request.id, version, granted: request.allow };
    return { ...find(requests, request.id), primitive: ctx.primitive.id };
  },
});

/** A person declines: the request is answered, nothing is stored. Account-level. */
export const vaultRequestDecline = vaultOp({
  name: "vault.request_decline",
  access: "write",
  destructive: false,
  idempotent: true,
  writesStorage: false,
  accountOnly: true,
  input: z.strictObject({ request: requestId }),
  run(ctx, input): SecretRequest {
    const { requests } = ctx.store;
    const request = find(requests, input.request);
    ctx.audit.target = request.name;
    if (!requests.answer(request.id, "declined", ctx.principal.actor, null)) throw answeredAlready(request);
    requests.answered(request.id);
    ctx.audit.detail = { request: request.id };
    return { ...find(requests, request.id), primitive: ctx.primitive.id };
  },
});

/** The requests waiting for an answer (the dashboard's vault browser links each to its page). */
export const vaultRequests = vaultOp({
  name: "vault.requests",
  access: "read",
  writesStorage: false,
  tool: "vault_list",
  input: z.strictObject({}),
  run(ctx): { data: SecretRequest[] } {
    return { data: ctx.store.requests.pending().map((r) => ({ ...r, primitive: ctx.primitive.id })) };
  },
});

export const REQUEST_OPERATIONS: readonly AnyOperation[] = [
  vaultRequest,
  vaultRequestGet,
  vaultRequestFulfil,
  vaultRequestDecline,
  vaultRequests,
];
