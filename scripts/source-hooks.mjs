// Module resolution hooks for test child processes that run Prim from its TypeScript sources
// (with tsx): `@prim/<pkg>` resolves to `packages/<pkg>/src/index.ts` (`@prim/api`: `apps/api`), and the
// subpath entries `@prim/wire/invoke` and `@prim/billing/standin` to `src/<subpath>/index.ts`, as
// vitest.config.ts's aliases do for the tests themselves. Loaded with
// `node --import tsx --import ./scripts/register-source-hooks.mjs <entry.ts>`.
const ROOT = new URL("../", import.meta.url);

/** The hook itself: synchronous, so it serves `module.registerHooks` and `module.register` alike. */
export function resolveSource(specifier, context, next) {
  const m = /^@prim\/([a-z]+)(?:\/(invoke|standin))?$/.exec(specifier);
  if (m === null) return next(specifier, context);
  const folder = m[1] === "api" ? "apps/api" : `packages/${m[1]}`;
  const source = m[2] ? `${folder}/src/${m[2]}/index.ts` : `${folder}/src/index.ts`;
  return next(new URL(source, ROOT).href, context);
}

/** For `module.register` (a worker thread's hooks). */
export const resolve = resolveSource;
