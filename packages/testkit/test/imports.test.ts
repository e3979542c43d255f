// No cross-unit relative import, no package → app import or dependency (import-rules.ts). A
// failure lists each offending file, line and import.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appNames, dependencyOffences, importOffences, repositoryOffences, sourceFiles } from "./import-rules.js";

const APPS = ["@prim/api", "@prim/mcp-server", "@prim/web"];

describe("the rules, on sources made up here", () => {
  it("refuses a relative import that leaves its unit, and only that", () => {
    const source = [
      'import { freshDatabase } from "../../db/test/pg.js";',
      'import { helper } from "./helpers.js";',
      'import { engine } from "../src/engine.js";',
      'const later = await import("../../../apps/api/src/index.js");',
      '// import { commented } from "../../http/test/helpers.js";',
      'const text = "from \\"../../cli/src/main.js\\"";',
    ].join("\n");
    expect(importOffences("packages/billing/test/overage.test.ts", source, APPS)).toEqual([
      'packages/billing/test/overage.test.ts:1: import "../../db/test/pg.js" — leaves packages/billing for packages/db/test/pg.js',
      'packages/billing/test/overage.test.ts:4: import "../../../apps/api/src/index.js" — leaves packages/billing for apps/api/src/index.js',
    ]);
    expect(importOffences("bench/dashboard.ts", 'import { x } from "../packages/db/test/pg.js";', APPS)).toHaveLength(
      1,
    );
    expect(importOffences("bench/lib/kv.ts", 'import { x } from "../cloud-kv-server.js";', APPS)).toEqual([]);
    expect(
      importOffences("infra/test/lib/apps.ts", 'import { x } from "../../../apps/web/src/server/env.js";', APPS),
    ).toHaveLength(1);
  });

  it("refuses an app imported by a package, but not by testkit, an app or bench", () => {
    const source =
      'import { startApi } from "@prim/api";\nimport { x } from "@prim/mcp-server/sub";\nimport { y } from "@prim/apix";';
    expect(importOffences("packages/cli/src/admin.ts", source, APPS)).toEqual([
      'packages/cli/src/admin.ts:1: import "@prim/api" — a package imports an app',
      'packages/cli/src/admin.ts:2: import "@prim/mcp-server/sub" — a package imports an app',
    ]);
    expect(importOffences("packages/testkit/src/cloud/cells.ts", source, APPS)).toEqual([]);
    expect(importOffences("apps/mcp/test/mcp-cloud.test.ts", source, APPS)).toEqual([]);
    expect(importOffences("bench/push-server.ts", source, APPS)).toEqual([]);
  });

  it("refuses a package's dependency on an app, in any kind of dependencies, but not testkit's", () => {
    const root = mkdtempSync(join(tmpdir(), "prim-import-rules-"));
    const manifest = (path: string, body: object) => {
      mkdirSync(join(root, path), { recursive: true });
      writeFileSync(join(root, path, "package.json"), JSON.stringify(body));
    };
    try {
      manifest("apps/api", { name: "@prim/api" });
      manifest("packages/cli", { name: "@prim/cli", devDependencies: { "@prim/api": "0.1.0", "@prim/db": "0.1.0" } });
      manifest("packages/db", { name: "@prim/db", dependencies: { pg: "^8" } });
      manifest("packages/testkit", { name: "@prim/testkit", dependencies: { "@prim/api": "0.1.0" } });
      expect(dependencyOffences(root)).toEqual([
        'packages/cli/package.json: devDependencies "@prim/api" — a package depends on an app',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("the repository", () => {
  it("knows the apps by their package names and walks every unit", () => {
    expect(appNames().sort()).toEqual(APPS);
    const files = sourceFiles();
    for (const unit of ["packages/db/src/", "apps/web/src/", "bench/", "infra/test/", "scripts/"]) {
      expect(
        files.some((path) => path.startsWith(unit)),
        unit,
      ).toBe(true);
    }
    expect(files.some((path) => /(^|\/)(node_modules|dist|\.next|generated)\//.test(path))).toBe(false);
  });

  it("has no cross-unit relative import and no package importing an app", () => {
    expect(repositoryOffences()).toEqual([]);
  });

  it("has no package depending on an app", () => {
    expect(dependencyOffences()).toEqual([]);
  });
});
