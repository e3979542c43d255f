/**
 * A token68 (RFC 7235 §2.1, the b64token of RFC 6750 §2.1): letters, digits, `-._~+/`, then any
 * `=` padding. A credential sent as `Authorization: Bearer <credential>` must be one.
 */
export const TOKEN68_RE = /^[A-Za-z0-9\-._~+/]+=*$/;

// The scheme is case-insensitive (RFC 7235 §2.1), one or more spaces separate it from the
// token68; the field's optional whitespace at either end is not part of the value (RFC 9110 §5.5).
const BEARER = /^[ \t]*bearer +([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

/**
 * The credential of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), or undefined when
 * the header is missing, names another scheme or carries anything but one token68.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}
