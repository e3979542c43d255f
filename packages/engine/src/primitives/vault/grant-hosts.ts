import { invalid } from "@prim/wire";
import { z } from "zod";
import { normalizeHostPattern } from "./hosts.js";
import { MAX_GRANT_HOSTS } from "./limits.js";

/** A grant's `allow.hosts` (vault.grant, and the grant a secret request proposes). */
export const hostsSchema = z
  .array(z.string())
  .min(1, "must name at least one host")
  .max(MAX_GRANT_HOSTS, `at most ${MAX_GRANT_HOSTS} hosts`);

/** Canonical, de-duplicated host patterns; a bad one is a 400 naming its index. */
export function normalizeHosts(hosts: string[], field = "allow.hosts"): string[] {
  const out = new Set<string>();
  for (const [i, host] of hosts.entries()) {
    const result = normalizeHostPattern(host);
    if ("error" in result) throw invalid(`${field}[${i}]: ${result.error}`);
    out.add(result.pattern);
  }
  return [...out];
}
