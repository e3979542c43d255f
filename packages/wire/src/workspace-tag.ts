/*
 * The workspace tag a credential carries (issue 43, "Routing at the edge"): a proxy in front of
 * the cells (HAProxy, @prim/cells `edge/`) reads it from the credential's text and sends the
 * request to the cell that serves the workspace, without asking anyone.
 *
 * The tag is the workspace id's own unique part: `ws_<ulid>` → the 26 lowercase Crockford
 * characters of the ulid. Deterministic, unique by construction (two workspaces never share a
 * tag, so the edge's map is exactly the placement table, with no collisions to resolve), and no
 * secret (the workspace id is in every signed URL and API answer). It grants nothing: a key is
 * still verified by the sha256 of its whole text, and a tag that disagrees with the workspace of
 * the key's row is refused (401 `invalid_token`). A workspace id of another shape (none is made
 * today) has no tag: its credentials keep the untagged format and the edge's fallback routes them.
 */

/** A tag's text: the 26 characters of a lowercase ulid. */
export const WORKSPACE_TAG_PATTERN = "[0-9a-z]{26}";
const WORKSPACE_ID_RE = new RegExp(`^ws_(${WORKSPACE_TAG_PATTERN})$`);
/** `pk_<tag>_<base58 secret>` (base58 has no `_`, so the parse is unambiguous). */
const TAGGED_KEY_RE = new RegExp(`^pk_(${WORKSPACE_TAG_PATTERN})_[1-9A-HJ-NP-Za-km-z]{30,34}$`);
/** `pk_<base58 of 24 random bytes>`: the format of keys made before tags. */
const UNTAGGED_KEY_RE = /^pk_[1-9A-HJ-NP-Za-km-z]{30,34}$/;
/** `po_<tag>_<43 url-safe characters>`; an untagged token is `po_` and 43 (a different length). */
const TAGGED_ACCESS_TOKEN_RE = new RegExp(`^po_(${WORKSPACE_TAG_PATTERN})_[A-Za-z0-9_-]{43}$`);
const UNTAGGED_ACCESS_TOKEN_RE = /^po_[A-Za-z0-9_-]{43}$/;
/** `pa_<tag>_<id>.…`: an attenuated token of a tagged key (attenuation.ts). */
const TAGGED_ATTENUATED_RE = new RegExp(`^pa_(${WORKSPACE_TAG_PATTERN})_[0-9a-f]{32}\\.`);

/** The tag of `workspace` (its id), or null for an id of another shape than `ws_<ulid>`. */
export function workspaceTag(workspace: string): string | null {
  return WORKSPACE_ID_RE.exec(workspace)?.[1] ?? null;
}

/** Whether `text` has the shape of an API key, tagged (`pk_<tag>_<secret>`) or not (`pk_<secret>`). */
export function isApiKeyShape(text: string): boolean {
  return TAGGED_KEY_RE.test(text) || UNTAGGED_KEY_RE.test(text);
}

/** Whether `text` has the shape of an OAuth access token, tagged or not. */
export function isAccessTokenShape(text: string): boolean {
  return TAGGED_ACCESS_TOKEN_RE.test(text) || UNTAGGED_ACCESS_TOKEN_RE.test(text);
}

/**
 * The workspace tag a credential claims (a `pk_` key, a `po_` access token or a `pa_` token), or
 * null when it carries none (an untagged one, anything else). A claim only: the resolver checks it.
 */
export function credentialTag(token: string): string | null {
  return (
    (TAGGED_KEY_RE.exec(token) ?? TAGGED_ACCESS_TOKEN_RE.exec(token) ?? TAGGED_ATTENUATED_RE.exec(token))?.[1] ?? null
  );
}

/**
 * The display start of a key (stored as `start`): its first 8 characters — for a tagged key,
 * `pk_` and the secret's first 5 (every key of a workspace shares the tag, so it tells none apart).
 */
export function keyStart(key: string): string {
  const tagged = TAGGED_KEY_RE.exec(key);
  return tagged === null
    ? key.slice(0, 8)
    : `pk_${key.slice(4 + (tagged[1] as string).length, 9 + (tagged[1] as string).length)}`;
}
