// The repository's import rules (issue 38, item 5; ARCHITECTURE.md: dependencies point down, no
// package imports an app), checked on source text. A unit is one folder under packages/ or apps/,
// or one of bench/, infra/, scripts/.
//  1. No relative import leaves its unit: another unit's code is reached through its package
//     name (`@prim/<name>`, its public entry) or, for shared test harnesses, `@prim/testkit`.
//  2. No package under packages/ imports an app (`apps/*`'s package names), except
//     packages/testkit: the cloud harness is a test-only top layer over the apps.
//  3. No package under packages/ declares a dependency on an app (same exception).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The repository's root (this file is packages/testkit/test/import-rules.ts). */
export const REPO = fileURLToPath(new URL("../../../", import.meta.url));

const TOPS = ["packages", "apps", "bench", "infra", "scripts"];
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".next", "generated", ".turbo", "test-results", "coverage"]);
const SOURCE = /\.(ts|tsx|mts|cts|mjs|cjs|js)$/;
/** The one package allowed above the apps (its README says why). */
const TESTKIT = "packages/testkit";

/** The unit a repository path belongs to: `packages/db`, `apps/api`, `bench`, .... */
export function unitOf(path: string): string {
  const parts = path.split("/");
  return parts[0] === "packages" || parts[0] === "apps" ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

/** Every source file under the units, as repository paths with `/`. */
export function sourceFiles(root = REPO): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(`${dir}/${entry.name}`);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) {
        out.push(`${dir}/${entry.name}`);
      }
    }
  };
  for (const top of TOPS) walk(top);
  return out.sort();
}

/** The package names of the apps (`apps/*`/package.json). */
export function appNames(root = REPO): string[] {
  return readdirSync(join(root, "apps"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => JSON.parse(readFileSync(join(root, "apps", entry.name, "package.json"), "utf8")).name as string);
}

const namesApp = (specifier: string, apps: string[]) =>
  apps.some((name) => specifier === name || specifier.startsWith(`${name}/`));

/**
 * The offences of one file (`path` from the repository's root, `source` its text): one line
 * each, `path:line: import "specifier" — why`. Comments and strings that are not imports are
 * not imports (TypeScript's own pre-processor finds them, dynamic `import()` and `require` too).
 */
export function importOffences(path: string, source: string, apps: string[]): string[] {
  const unit = unitOf(path);
  const offences: string[] = [];
  const { importedFiles } = ts.preProcessFile(source, true, true);
  for (const { fileName: specifier, pos } of importedFiles) {
    const line = source.slice(0, pos).split("\n").length;
    const where = `${path}:${line}: import "${specifier}"`;
    if (specifier.startsWith(".")) {
      const target = normalize(join(dirname(path), specifier))
        .split(sep)
        .join("/");
      if (target.startsWith("..") || unitOf(target) !== unit) {
        offences.push(`${where} — leaves ${unit} for ${target}`);
      }
    } else if (unit.startsWith("packages/") && unit !== TESTKIT && namesApp(specifier, apps)) {
      offences.push(`${where} — a package imports an app`);
    }
  }
  return offences;
}

/** The dependencies of packages (package.json, every kind) that name an app. */
export function dependencyOffences(root = REPO, apps = appNames(root)): string[] {
  const offences: string[] = [];
  for (const entry of readdirSync(join(root, "packages"), { withFileTypes: true })) {
    const unit = `packages/${entry.name}`;
    if (!entry.isDirectory() || unit === TESTKIT) continue;
    const manifest = JSON.parse(readFileSync(join(root, unit, "package.json"), "utf8"));
    for (const kind of ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]) {
      for (const name of Object.keys(manifest[kind] ?? {})) {
        if (namesApp(name, apps))
          offences.push(`${unit}/package.json: ${kind} "${name}" — a package depends on an app`);
      }
    }
  }
  return offences;
}

/** Every import offence in the repository. */
export function repositoryOffences(root = REPO): string[] {
  const apps = appNames(root);
  return sourceFiles(root).flatMap((path) => importOffences(path, readFileSync(join(root, path), "utf8"), apps));
}
