// Setup of the root vitest config's `cloud-rest` project: the REST suites of packages/http run
// against apps/api (one suite, two targets). Each file gets one cloud (its own Postgres
// database); each server a suite starts is a fresh workspace in it, reached with its workspace
// key, on a clock of its own.
import { join } from "node:path";
import { createWorkspace } from "@prim/db";
import { type Clock, ManualClock, OPERATIONS, type Principal } from "@prim/engine";
import { afterAll } from "vitest";
import { checkResponses } from "../../../packages/http/test/conformance.js";
import {
  requestJson,
  type TestServer,
  type TestServerOptions,
  useServerTarget,
} from "../../../packages/http/test/helpers.js";
import { startCloud, type TestCloud } from "./cloud.js";

let clock = new ManualClock(1_800_000_000_000);
/** The cell's clock: whichever the latest server's suite moves. */
const switchClock: Clock = { now: () => clock.now(), at: (at, fn) => clock.at(at, fn) };

const operations = new Map(OPERATIONS.map((op) => [op.name, op]));
let cloud: Promise<TestCloud> | undefined;
let count = 0;

afterAll(async () => {
  if (cloud !== undefined) await (await cloud).stop();
  cloud = undefined;
});

/** What only the local server has: the cloud has keys, its own data directories and engines. */
const LOCAL_ONLY = ["rootToken", "authenticate", "dataDir"] as const;

useServerTarget(async (options: TestServerOptions): Promise<TestServer> => {
  for (const name of LOCAL_ONLY) {
    if (options[name] !== undefined) throw new Error(`the cloud target has no '${name}': keep this suite local-only`);
  }
  // The vault helper always asks for loopback fetches (its echo server); cloud engines never
  // fetch loopback, so suites that fetch stay local-only.
  const { allowLoopbackFetch: _, ...engineOptions } = options.engineOptions ?? {};
  if (Object.keys(engineOptions).length > 0) throw new Error("the cloud target takes no engine options");
  cloud ??= startCloud(
    "rest",
    {},
    { clock: switchClock, beforeListen: (api) => checkResponses(api.app, (name) => operations.get(name)) },
  );
  const { url, api } = await cloud;
  clock = options.clock ?? new ManualClock(1_800_000_000_000);
  const ws = await createWorkspace(api.hub.pool, { name: `suite ${++count}`, plan: "enterprise" });
  const engine = api.tenants.engine(ws.workspace.id);
  const auth = { authorization: `Bearer ${ws.key}` };
  const principal: Principal = {
    kind: "account",
    workspace: ws.workspace.id,
    actor: `key:${ws.key_id}`,
    groupId: null,
    tools: null,
  };
  // The suites set up data as the local principal; here that is the workspace key's principal.
  const asWorkspace = (p: Principal): Principal => (p.workspace === "local" ? { ...p, ...principal } : p);
  const door = new Proxy(engine, {
    get(target, prop) {
      if (prop === "invoke") {
        return (p: Principal, ...rest: [string, string | null, unknown, never?]) =>
          target.invoke(asWorkspace(p), ...rest);
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    url,
    engine: door,
    clock,
    dataDir: join(engine.services.files.primitivesDir, ".."),
    close: async () => {},
    workspace: ws.workspace.id,
    auth,
    api: (method, path, body, headers) => requestJson(url, method, path, body, { ...auth, ...headers }),
  };
});
