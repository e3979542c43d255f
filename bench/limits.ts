// limits benchmark: kv GET through apps/api with limits on (every request runs the Redis
// script; an Enterprise workspace with a rate high enough never to refuse) against the same
// app with PRIM_LIMITS=off, same run. Target: limits on keeps ≥ 0.90× of off's req/s (issue 43, fixed before its
// first run: token leases and batched counts instead of a Redis round trip per request).
import { compareKv, rpsRatio } from "./lib/kv-compare.js";
import { printRatio } from "./lib/verdict.js";

const TARGET = 0.9;

export async function run(): Promise<void> {
  const r = await compareKv({
    title: "limits bench (apps/api kv GET, limits on against off)",
    mode: "limits",
    names: { baseline: "limits_off", target: "limits_on" },
    puts: false,
  });
  printRatio("limits_on_vs_off_get", rpsRatio(r.limits_on_get, r.limits_off_get), TARGET);
}
