// cloud-kv benchmark: REST kv GET and PUT of 1 KiB values through apps/api with a workspace
// key (auth, limits in Redis, catalog and audit in Postgres) against `prim dev` on the same
// machine, in the same run, same shape. Targets: the cloud keeps ≥ 0.6× of local's GET req/s
// (issue 43: set once the local engine's own path got faster, fixed before its first run) and
// ≥ 0.7× of its PUT req/s.
import { compareKv, rpsRatio } from "./lib/kv-compare.js";
import { printRatio } from "./lib/verdict.js";

const TARGETS = { get: 0.6, put: 0.7 };

export async function run(): Promise<void> {
  const r = await compareKv({
    title: "cloud-kv bench (apps/api with a workspace key against prim dev)",
    mode: "local",
    names: { baseline: "local", target: "cloud" },
    puts: true,
  });
  printRatio("cloud_get_vs_local", rpsRatio(r.cloud_get, r.local_get), TARGETS.get);
  printRatio("cloud_put_vs_local", rpsRatio(r.cloud_put, r.local_put), TARGETS.put);
}
