import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine, ManualClock } from "@prim/engine";
import { createLocalServer } from "@prim/http";
import { assertConformant, checkResponses } from "@prim/testkit/rest";
import { afterEach } from "vitest";
import { PrimClient, type PrimitiveType } from "../src/index.js";

/**
 * A real local engine and REST server on a free port, and a PrimClient for it. Every JSON
 * answer the server sends is validated against its OpenAPI document (a violation fails the test).
 */
export interface SdkServer {
  client: PrimClient;
  url: string;
  engine: Engine;
  clock: ManualClock | undefined;
  /** Creates group `app` (once) and a primitive of `type` in it; answers its id. */
  primitive(type: PrimitiveType, name?: string): Promise<string>;
  close(): Promise<void>;
}

const open: SdkServer[] = [];

afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
  assertConformant();
});

export async function startSdkServer(options: { rootToken?: string; manualClock?: boolean } = {}): Promise<SdkServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-sdk-"));
  const clock = options.manualClock ? new ManualClock(1_800_000_000_000) : undefined;
  const engine = Engine.openLocal({ dataDir, ...(clock ? { clock } : {}) });
  const app = createLocalServer({ engine, rootToken: options.rootToken });
  checkResponses(app, (name) => engine.operation(name));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const client = new PrimClient({ baseUrl: url, token: options.rootToken });
  let group = false;
  let closed = false;
  const server: SdkServer = {
    client,
    url,
    engine,
    clock,
    async primitive(type, name = `${type}-1`) {
      if (!group) {
        await client.groups.create("app");
        group = true;
      }
      return (await client.primitives.create({ name, type, group: "app" })).id;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  open.push(server);
  return server;
}
