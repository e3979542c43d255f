// The engine process of the remote-invoker test runs: a real engine over `argv[2]` serving only
// `POST /internal/invoke` on a loopback listener (secret from PRIM_INTERNAL_SECRET). The clock
// is the helpers' ManualClock start, so results (expires_at) match the in-process runs.
import { Engine, ManualClock } from "@prim/engine";
import { createInternalServer, listenInternal } from "@prim/http";

const [dataDir, allowLoopbackFetch] = process.argv.slice(2);
const secret = process.env.PRIM_INTERNAL_SECRET ?? "";
const engine = Engine.openLocal({
  dataDir: dataDir as string,
  clock: new ManualClock(1_800_000_000_000),
  allowLoopbackFetch: allowLoopbackFetch === "1",
});
const app = createInternalServer({ invoker: engine, secret });
const url = await listenInternal(app);
console.log(`internal invoke listening on ${url}`);

let closing = false;
const close = async () => {
  if (closing) return;
  closing = true;
  await app.close();
  await engine.close();
  process.exit(0);
};
process.on("SIGTERM", () => void close());
// The test process went away: stop too.
process.stdin.on("end", () => void close());
process.stdin.resume();
