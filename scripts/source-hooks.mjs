// Module resolution hooks for test child processes that run Prim from its TypeScript sources
// (with tsx): `@prim/<pkg>` resolves to `packages/<pkg>/src/index.ts` and `@prim/wire/invoke`
// to its subpath, as vitest.config.ts's aliases do for the tests themselves. Loaded with
// `node --import tsx --import ./scripts/register-source-hooks.mjs <entry.ts>`.
const PACKAGES = new URL("../packages/", import.meta.url);

export async function resolve(specifier, context, next) {
  const m = /^@prim\/([a-z]+)(\/invoke)?$/.exec(specifier);
  if (m === null) return next(specifier, context);
  const source = m[2] ? `${m[1]}/src/invoke/index.ts` : `${m[1]}/src/index.ts`;
  return next(new URL(source, PACKAGES).href, context);
}
