import { hash, timingSafeEqual } from "node:crypto";

/**
 * Checks a presented secret against the cells' shared one (`PRIM_INTERNAL_SECRET`): both sides
 * hashed, so the compare takes the same time whatever either's length. Used by the internal
 * invoke and by forwards between cells.
 */
export function secretMatcher(secret: string): (given: string | undefined) => boolean {
  const expected = hash("sha256", secret, "buffer");
  return (given) => given !== undefined && timingSafeEqual(hash("sha256", given, "buffer"), expected);
}
