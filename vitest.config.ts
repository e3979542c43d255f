import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string) => fileURLToPath(new URL(`./${path}`, import.meta.url));

/**
 * The REST suites that also run against the cloud. Out: suites of local-only behaviour (tokenless
 * and root-token auth, restarts on one data directory, loopback fetches) and those built on
 * hand-made principals (audit, db-access: the cloud's keys and scopes have their own suites in
 * apps/api/test, generated from the route table).
 */
const CLOUD_REST_SUITES = [
  "db-hostile-input",
  "db-point-reads",
  "db-query",
  "db-results",
  "db-safety",
  "fs-files",
  "fs-glob",
  "fs-search",
  "fs-tree",
  "groups-primitives",
  "kv",
  "lifecycle-table",
  "memory-consolidate",
  "memory-recall",
  "memory-records",
  "memory-supersede",
  "queue-basic",
  "queue-batch",
  "queue-leases",
  "queue-status-lists",
  "response-caps",
  "storage-objects",
  "storage-range",
  "vault-grants",
  "vault-secrets",
];

/**
 * Files sensitive to CPU and timing — several processes each (cells, crashes, power loss, the
 * browser suites, the conformance runner, push/pull, outages) — run after the rest, two at a time
 * (`PRIM_SENSITIVE_WORKERS`): one alone left a core idle (0.96 cores busy on 2), two pass as one did
 * and take 155 s instead of 224 (issue 36).
 */
/** Chromium through Playwright against the built dashboard. */
const BROWSER = "apps/web/test/*.e2e.test.ts";
/**
 * `PRIM_SKIP_BROWSER_TESTS=1` leaves them out: `.ci/run`'s second pass, on the oldest Node the
 * project supports, runs everything else (the pages are the same bytes on every Node, and the
 * dashboard's server is tested there over HTTP by apps/web's other files).
 */
// biome-ignore lint/suspicious/noUndeclaredEnvVars: vitest runs outside turbo (no task caches it)
const SKIP_BROWSER = process.env.PRIM_SKIP_BROWSER_TESTS === "1";

const SENSITIVE = [
  "apps/api/test/cells*.test.ts",
  "apps/api/test/edge-routing.test.ts",
  "apps/mcp/test/mcp-cells.test.ts",
  "apps/api/test/*-outage.test.ts",
  "apps/api/test/restart-fsck.test.ts",
  BROWSER,
  "**/conformance*.test.ts",
  "packages/cli/test/{crash,power-loss,push-pull,group-signal}.test.ts",
];

/** Test files at once in the first group: `PRIM_TEST_WORKERS`, else 3 (measured on 2 cores: issue 36). */
// biome-ignore lint/suspicious/noUndeclaredEnvVars: vitest runs outside turbo (no task caches it)
const WORKERS = Number(process.env.PRIM_TEST_WORKERS ?? 3);
/** Files at once in the sensitive group: `PRIM_SENSITIVE_WORKERS`, else 2 (1 to rule contention out). */
// biome-ignore lint/suspicious/noUndeclaredEnvVars: as above
const SENSITIVE_WORKERS = Number(process.env.PRIM_SENSITIVE_WORKERS ?? 2);

/**
 * A worker process runs many test files (no process per file), each with fresh modules of its
 * own (scripts/test-fresh-modules.ts).
 */
const SHARED_PROCESS = { isolate: false, setupFiles: ["scripts/test-fresh-modules.ts"] };

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources, so no build is needed first.
    alias: [
      { find: /^@prim\/wire\/invoke$/, replacement: src("packages/wire/src/invoke/index.ts") },
      { find: /^@prim\/billing\/standin$/, replacement: src("packages/billing/src/standin/index.ts") },
      { find: /^@prim\/api$/, replacement: src("apps/api/src/index.ts") },
      { find: /^@prim\/([a-z]+)$/, replacement: src("packages/$1/src/index.ts") },
    ],
  },
  test: {
    // A guard against hangs, not a measure of speed: CI machines have run the whole suite 2.2×
    // slower than usual, and a test that takes 10 s on a quiet one must not fail for that.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "prim",
          ...SHARED_PROCESS,
          include: [
            "packages/*/test/**/*.test.ts",
            "apps/*/test/**/*.test.ts",
            "bench/**/*.test.ts",
            "infra/test/**/*.test.ts",
          ],
          exclude: ["**/node_modules/**", ...SENSITIVE],
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The REST suites again, against apps/api with a workspace key (one suite, two targets).
        extends: true,
        test: {
          name: "cloud-rest",
          include: CLOUD_REST_SUITES.map((name) => `packages/http/test/${name}.test.ts`),
          isolate: false,
          setupFiles: [...SHARED_PROCESS.setupFiles, "apps/api/test/rest-target.ts"],
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "sensitive",
          ...SHARED_PROCESS,
          include: SENSITIVE,
          exclude: ["**/node_modules/**", ...(SKIP_BROWSER ? [BROWSER] : [])],
          maxWorkers: SENSITIVE_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
