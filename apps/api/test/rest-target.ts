// Setup of the root vitest config's `cloud-rest` project: the REST suites of packages/http run
// against apps/api (one suite, two targets), as production runs it (cells.ts). Each file gets
// two cells over its own Postgres database and s3rver; each server a suite starts is a fresh
// Enterprise workspace placed on cell B, reached with its workspace key, on a clock of its own —
// and every request goes to cell A, so each one is forwarded: the suites prove that forwarding
// keeps the spec's behaviour.
import { join } from "node:path";
import { readPlacement, setCellState } from "@prim/db";
import { type Clock, ManualClock, OPERATIONS, type Principal } from "@prim/engine";
import { fastWorkspace, startCells, type TestCellNode, type TestCells } from "@prim/testkit/cloud";
import {
  checkResponses,
  requestJson,
  type TestServer,
  type TestServerOptions,
  useServerTarget,
} from "@prim/testkit/rest";
import { afterAll } from "vitest";

let clock = new ManualClock(1_800_000_000_000);
/** The cell's clock: whichever the latest server's suite moves. */
const switchClock: Clock = { now: () => clock.now(), at: (at, fn) => clock.at(at, fn) };

const operations = new Map(OPERATIONS.map((op) => [op.name, op]));
let cloud: Promise<TestCells> | undefined;
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
  cloud ??= startCells(
    "rest",
    ["cell-a", "cell-b"],
    {},
    {
      clock: switchClock,
      // What a client sees is what the entry cell answers.
      beforeListen: (api, id) => {
        if (id === "cell-a") checkResponses(api.app, (name) => operations.get(name));
      },
    },
  ).then(async (cells) => {
    // New workspaces go to the open cell: B.
    await setCellState((cells.cells[0] as TestCellNode).api.hub.pool, "cell-a", "closed");
    return cells;
  });
  const [entry, owner] = (await cloud).cells as [TestCellNode, TestCellNode];
  const url = entry.url;
  clock = options.clock ?? new ManualClock(1_800_000_000_000);
  const ws = await fastWorkspace(entry.api.hub.pool, `suite ${++count}`);
  // Every request a suite sends must be forwarded, or this target proves nothing about forwarding.
  const placed = await readPlacement(entry.api.hub.pool, ws.workspace.id);
  if (placed?.cell !== owner.id) throw new Error(`the suite's workspace is on ${placed?.cell}, not ${owner.id}`);
  const engine = owner.api.tenants.engine(ws.workspace.id);
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
