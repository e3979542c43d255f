// A separate process for the data-directory lock tests (run with `node --import tsx`):
// waits until the epoch millisecond given as argv[3] (so racers start together), tries to take
// the lock on argv[2], prints "held <pid>" or "busy <message>", and keeps a held lock until it
// is killed.
import { DataDirLock } from "../../src/sqlite/data-dir-lock.js";

const [dataDir, startAt] = process.argv.slice(2) as [string, string | undefined];
const wait = Number(startAt ?? 0) - Date.now();
setTimeout(
  () => {
    try {
      const lock = DataDirLock.acquire(dataDir);
      console.log(`held ${process.pid}`);
      // Hold until killed. The timer keeps the lock reachable: a lock nothing refers to is
      // collected, and its connection closed, releasing it (Node 24's GC did so within seconds).
      setInterval(() => void lock, 60_000);
    } catch (err) {
      console.log(`busy ${(err as Error).message}`);
      process.exit(0);
    }
  },
  Math.max(0, wait),
);
