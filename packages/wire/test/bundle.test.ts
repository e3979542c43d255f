// The wire contract and the SDK built on it must never pull the engine (better-sqlite3, zod, the
// SQL host) into a browser bundle or a client: esbuild bundles each entry and its inputs are listed.
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const PACKAGES = fileURLToPath(new URL("../../", import.meta.url));

async function bundledInputs(entry: string, platform: "browser" | "node"): Promise<string[]> {
  const result = await build({
    entryPoints: [`${PACKAGES}${entry}`],
    bundle: true,
    write: false,
    metafile: true,
    platform,
    format: "esm",
    logLevel: "silent",
    // Resolve the workspace packages to their sources, as the tests do.
    alias: { "@prim/wire": `${PACKAGES}wire/src/index.ts` },
  });
  return Object.keys(result.metafile.inputs);
}

describe("what a bundle of the wire contract pulls in", () => {
  it("@prim/wire bundles for a browser from its own sources and nothing else", async () => {
    const inputs = await bundledInputs("wire/src/index.ts", "browser");
    expect(inputs.length).toBeGreaterThan(3);
    expect(inputs.filter((p) => !p.startsWith("packages/wire/src/"))).toEqual([]);
  });

  it("@prim/sdk bundles without the engine, better-sqlite3 or any other dependency", async () => {
    const inputs = await bundledInputs("sdk/src/index.ts", "node");
    expect(inputs.some((p) => p.startsWith("packages/sdk/src/"))).toBe(true);
    expect(inputs.filter((p) => !p.startsWith("packages/sdk/src/") && !p.startsWith("packages/wire/src/"))).toEqual([]);
  });

  it("would notice the engine: a bundle of the engine lists better-sqlite3", async () => {
    const inputs = await bundledInputs("engine/src/index.ts", "node").catch(() => null);
    // Bundling the engine pulls native code esbuild cannot bundle for a browser; for node it lists it.
    expect(inputs?.some((p) => p.includes("better-sqlite3"))).toBe(true);
  });
});
