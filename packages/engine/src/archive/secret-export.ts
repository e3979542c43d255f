import { createHash } from "node:crypto";
import type { Principal } from "@prim/wire";

/**
 * Whether a group archive may carry vault values for a key other than the workspace's own
 * (CLOUD.md: Credentials, "Group archives carry vault values only for a workspace whose owner
 * enabled secret export"). The cloud supplies one per cell, reading the workspace's setting and
 * the caller's role; the local engine has none: its data directory's owner holds the keys anyway,
 * so `prim dev` exports values sealed for the recipient, as it always did.
 */
export interface SecretExportPolicy {
  /** Whether `principal` (already account-level) may take vault values out of its workspace. */
  allows(principal: Principal): Promise<boolean>;
}

/**
 * A recipient's key as audit entries name it: sha256 of the raw X25519 public key (32 bytes),
 * first 16 hex characters — enough to tell keys apart, short enough to read.
 */
export function recipientFingerprint(recipient: string): string {
  return createHash("sha256").update(Buffer.from(recipient, "base64url")).digest("hex").slice(0, 16);
}
