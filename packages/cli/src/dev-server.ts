import { resolve } from "node:path";
import type { ChangeLogOptions, Clock, Embedder, Engine } from "@prim/engine";
import { createLocalServer } from "@prim/http";
import { mountMcp } from "@prim/mcp";
import type { Durability } from "@prim/wire";
import { removeEngineFile, writeEngineFile } from "./engine-file.js";
import { openLocalEngine } from "./local-engine.js";

export interface DevServerOptions {
  port?: number;
  /** Interface to listen on; default `localhost` (IPv4 and IPv6 loopback). */
  host?: string;
  dataDir: string;
  rootToken?: string;
  clock?: Clock;
  /** Embeddings for memory recall; none by default. */
  embedder?: Embedder;
  /** When writes are acknowledged: `fast` (default) or `durable` (fsynced first). */
  durability?: Durability;
  /** Change logs' settings (`{ enabled: false }`: benchmarks only, the feeds then miss every write). */
  changeLog?: ChangeLogOptions;
  logger?: boolean;
}

export interface DevServer {
  url: string;
  port: number;
  engine: Engine;
  close(): Promise<void>;
}

/** Starts the local engine: REST under `/v1` over data in `dataDir`. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const engine = openLocalEngine(options);
  const app = createLocalServer({ engine, rootToken: options.rootToken, logger: options.logger });
  mountMcp(app, engine, { changes: engine.services.changes });
  try {
    await app.listen({ port: options.port ?? 7777, host: options.host ?? "localhost" });
  } catch (err) {
    await engine.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : (options.port ?? 7777);
  const dataDir = resolve(options.dataDir);
  writeEngineFile(dataDir, { pid: process.pid, url: `http://localhost:${port}` });
  let closing: Promise<void> | null = null;
  return {
    url: `http://localhost:${port}`,
    port,
    engine,
    close() {
      closing ??= (async () => {
        removeEngineFile(dataDir);
        await app.close();
        await engine.close();
      })();
      return closing;
    },
  };
}
