import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const pkg = (name: string) => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources, so no build is needed first.
    alias: [{ find: /^@prim\/(engine|http|mcp|sdk|cli)$/, replacement: pkg("$1") }],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "bench/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
