import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string) => fileURLToPath(new URL(`./${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources, so no build is needed first.
    alias: [
      { find: /^@prim\/wire\/invoke$/, replacement: src("packages/wire/src/invoke/index.ts") },
      { find: /^@prim\/api$/, replacement: src("apps/api/src/index.ts") },
      { find: /^@prim\/([a-z]+)$/, replacement: src("packages/$1/src/index.ts") },
    ],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "bench/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
