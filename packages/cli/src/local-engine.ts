import { resolve } from "node:path";
import { type ChangeLogOptions, type Clock, type Embedder, Engine, embedderFromSettings } from "@prim/engine";
import type { Durability } from "@prim/wire";
import type { Env } from "./env.js";

/** How the CLI's local engine is built: the same for `prim dev` and `prim mcp`. */
export interface LocalEngineSetup {
  dataDir: string;
  clock?: Clock;
  /** Embeddings for memory recall; none unless `PRIM_EMBEDDINGS_URL` is set. */
  embedder?: Embedder;
  /** When writes are acknowledged (default `fast`; `prim dev --durable`, `PRIM_DURABILITY`). */
  durability?: Durability;
  /** Change logs' retention; `{ enabled: false }` records nothing (benchmarks only: bench/kv.ts). */
  changeLog?: ChangeLogOptions;
}

/** Memory recall's embedder from `PRIM_EMBEDDINGS_*` (undefined when no URL is set). */
export function embedderFromEnv(env: Env): Embedder | undefined {
  return embedderFromSettings({
    url: env.PRIM_EMBEDDINGS_URL,
    model: env.PRIM_EMBEDDINGS_MODEL,
    apiKey: env.PRIM_EMBEDDINGS_KEY,
  });
}

/**
 * The one place the CLI opens an engine. Before it, `prim mcp` opened the directory without the
 * embedder `prim dev` passed, so memory recall answered differently on the same data.
 */
export function openLocalEngine(setup: LocalEngineSetup): Engine {
  return Engine.openLocal({
    dataDir: resolve(setup.dataDir),
    clock: setup.clock,
    embedder: setup.embedder,
    durability: setup.durability,
    ...(setup.changeLog === undefined ? {} : { changeLog: setup.changeLog }),
  });
}
