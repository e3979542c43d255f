// The engine process of the remote-invoker test runs: a real cell over `argv[2]` serving only
// `POST /internal/invoke` on a loopback listener (secret from PRIM_INTERNAL_SECRET). One process
// serves all the tests of a file: each test's engine is a fresh tenant of the cell (the `local`
// workspace on a directory of its own, on a new clock at the helpers' ManualClock start, so
// results such as expires_at match the in-process runs), opened and closed on commands read
// from stdin, one a line: `open <dir>` answers `opened`, `release` answers `released` (or
// `failed <message>`). Requests while no tenant is open fail.
import { createInterface } from "node:readline";
import { Cell, type Clock, Engine, type Invoker, LOCAL_WORKSPACE, ManualClock } from "@prim/engine";
import { createInternalServer, listenInternal } from "@prim/http";

const [dataDir, allowLoopbackFetch] = process.argv.slice(2);
const secret = process.env.PRIM_INTERNAL_SECRET ?? "";
let clock: Clock = new ManualClock(1_800_000_000_000);
const cell = Cell.openLocal({
  dataDir: dataDir as string,
  clock: { now: () => clock.now(), at: (at, fn) => clock.at(at, fn) },
  allowLoopbackFetch: allowLoopbackFetch === "1",
});
let engine: Engine | undefined;
const invoker: Invoker = {
  invoke: (principal, opName, target, input, meta) => {
    if (engine === undefined) throw new Error("no test is using this engine now");
    return engine.invoke(principal, opName, target, input, meta);
  },
};
const app = createInternalServer({ invoker, secret });
const url = await listenInternal(app);
console.log(`internal invoke listening on ${url}`);

async function release(): Promise<void> {
  const open = engine;
  engine = undefined;
  await open?.close();
}

const commands = createInterface({ input: process.stdin });
let queue = Promise.resolve();
commands.on("line", (line) => {
  queue = queue.then(async () => {
    try {
      if (line.startsWith("open ")) {
        await release();
        clock = new ManualClock(1_800_000_000_000);
        engine = Engine.forWorkspace(cell, LOCAL_WORKSPACE, { dataDir: line.slice(5) });
        console.log("opened");
      } else if (line === "release") {
        await release();
        console.log("released");
      } else {
        console.log(`failed unknown command ${JSON.stringify(line)}`);
      }
    } catch (err) {
      console.log(`failed ${String(err).replaceAll("\n", " ")}`);
    }
  });
});

let closing = false;
const close = async () => {
  if (closing) return;
  closing = true;
  await queue;
  await release();
  await app.close();
  await cell.close();
  process.exit(0);
};
process.on("SIGTERM", () => void close());
// The test process went away (or is done with it): stop too.
commands.on("close", () => void close());
