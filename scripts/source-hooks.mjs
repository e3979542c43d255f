// Module resolution hooks for test child processes that run Prim from its TypeScript sources
// (with tsx): `@prim/<pkg>` resolves to `packages/<pkg>/src/index.ts` (`@prim/api`: `apps/api`) and `@prim/wire/invoke`
// to its subpath, as vitest.config.ts's aliases do for the tests themselves. Loaded with
// `node --import tsx --import ./scripts/register-source-hooks.mjs <entry.ts>`.
const ROOT = new URL("../", import.meta.url);

/** The hook itself: synchronous, so it serves `module.registerHooks` and `module.register` alike. */
export function resolveSource(specifier, context, next) {
  const m = /^@prim\/([a-z]+)(\/invoke)?$/.exec(specifier);
  if (m === null) return next(specifier, context);
  const folder = m[1] === "api" ? "apps/api" : `packages/${m[1]}`;
  const source = m[2] ? `${folder}/src/invoke/index.ts` : `${folder}/src/index.ts`;
  return next(new URL(source, ROOT).href, context);
}

/** For `module.register` (a worker thread's hooks). */
export const resolve = resolveSource;
