// A separate process for the data-directory lock tests (run with `node --import tsx`):
// waits until the epoch millisecond given as argv[3] (so racers start together), tries to take
// the lock on argv[2], prints "held <pid>" or "busy <message>", and keeps a held lock until it
// is killed.
import { DataDirLock } from "../../src/storage/data-dir-lock.js";

const [dataDir, startAt] = process.argv.slice(2) as [string, string | undefined];
const wait = Number(startAt ?? 0) - Date.now();
setTimeout(
  () => {
    try {
      DataDirLock.acquire(dataDir);
      console.log(`held ${process.pid}`);
      setInterval(() => {}, 60_000); // hold until killed
    } catch (err) {
      console.log(`busy ${(err as Error).message}`);
      process.exit(0);
    }
  },
  Math.max(0, wait),
);
