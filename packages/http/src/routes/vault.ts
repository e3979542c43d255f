import type { RestRoute } from "../route.js";

const tag = "vault";
const base = "/v1/primitives/:id";
const name = { name: "name" } as const;

export const VAULT_ROUTES: readonly RestRoute[] = [
  {
    method: "PUT",
    url: `${base}/secrets/:name`,
    op: "vault.put",
    target: "id",
    pathInput: name,
    from: "body",
    summary: "Store a secret (account only); answers its name and version, never the value",
    tag,
  },
  {
    method: "DELETE",
    url: `${base}/secrets/:name`,
    op: "vault.delete",
    target: "id",
    pathInput: name,
    from: "none",
    status: 204,
    summary: "Delete a secret and its grant (account only)",
    tag,
  },
  {
    method: "GET",
    url: `${base}/secrets`,
    op: "vault.list",
    target: "id",
    from: "query",
    summary: "Secret names, versions and grants (no values)",
    tag,
  },
  {
    method: "POST",
    url: `${base}/grants`,
    op: "vault.grant",
    target: "id",
    from: "body",
    status: 201,
    summary: "Grant a secret's use to hosts and methods (account only); replaces its grant",
    tag,
  },
  { method: "GET", url: `${base}/grants`, op: "vault.grants", target: "id", from: "query", summary: "Grants", tag },
  {
    method: "DELETE",
    url: `${base}/grants/:name`,
    op: "vault.revoke",
    target: "id",
    pathInput: name,
    from: "none",
    status: 204,
    summary: "Revoke a secret's grant (account only)",
    tag,
  },
  {
    method: "POST",
    url: `${base}/fetch`,
    op: "vault.fetch",
    target: "id",
    from: "body",
    // The outbound request stops if the caller goes away.
    abortable: true,
    summary: "Make a request with a secret injected; the response comes back with the secret redacted",
    tag,
  },
];
