import { notFound } from "@prim/wire";

/**
 * Resource URIs: `prim://<primitive>/<path>`. The authority is the primitive's id (what
 * `resources/list` and resource links write) or its name in the session's group (what a client
 * may type, as tools take it). The path is an fs file's path without its leading `/`, a storage
 * object's key, or `schema` for a db. Each `/`-separated segment is percent-encoded on its own
 * (`encodeURIComponent`), so a URI names exactly one file or key and a literal `/` is always a
 * separator.
 *
 * Refused as `not_found` (a URI naming nothing this session can reach), as tools refuse a path
 * that climbs out: a `.` or `..` segment, raw or percent-encoded (`%2e%2e`); an encoded `/`
 * (`%2F`) or NUL; malformed percent-encoding; a query or fragment. Storage keys holding such a
 * segment (`a/../b` is a valid key) are therefore not resources: use the storage tools.
 */

export const URI_PREFIX = "prim://";

/** A parsed resource URI: the primitive as named, and the decoded path segments. */
export interface ResourceAddress {
  ref: string;
  segments: string[];
}

const REF_RE = /^[A-Za-z0-9._-]{1,128}$/;

/** The URI of a file (`/a/b.txt`), an object key (`a/b.txt`) or a db's schema of `primitive`. */
export function resourceUri(primitive: string, path: string): string {
  return `${URI_PREFIX}${primitive}/${path.split("/").map(encodeURIComponent).join("/")}`;
}

export const fileUri = (primitive: string, path: string) => resourceUri(primitive, path.replace(/^\//, ""));
export const objectUri = resourceUri;
export const schemaUri = (primitive: string) => resourceUri(primitive, "schema");

/** Whether a storage key can be a resource (no `.`/`..` segment, which URIs refuse). */
export const addressableKey = (key: string) => key.split("/").every((s) => s !== "." && s !== "..");

/** Parses a resource URI; anything that is not one of ours, or tries to climb, is `not_found`. */
export function parseResourceUri(uri: string): ResourceAddress {
  const missing = () => notFound(`resource '${uri}'`);
  if (!uri.startsWith(URI_PREFIX) || /[?#]/.test(uri)) throw missing();
  const rest = uri.slice(URI_PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) throw missing();
  const ref = rest.slice(0, slash);
  if (!REF_RE.test(ref)) throw missing();
  const segments: string[] = [];
  for (const raw of rest.slice(slash + 1).split("/")) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw missing();
    }
    if (segment === "." || segment === ".." || segment.includes("/") || segment.includes("\0")) throw missing();
    segments.push(segment);
  }
  return { ref, segments };
}

/** The fs path of an address: `/` + segments, none empty (a canonical path has no `//`). */
export function filePath(address: ResourceAddress, uri: string): string {
  if (address.segments.some((s) => s === "")) throw notFound(`resource '${uri}'`);
  return `/${address.segments.join("/")}`;
}

/** The storage key of an address (keys may hold empty segments: `a//b`). */
export function objectKey(address: ResourceAddress, uri: string): string {
  const key = address.segments.join("/");
  if (key === "") throw notFound(`resource '${uri}'`);
  return key;
}
