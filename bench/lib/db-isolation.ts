// Isolation between dbs (issue 15, item 5): point writes on db B while db A runs statements
// that each run until the SQL host stops them at 5 s. Measured on an engine with one SQL host
// and on one with the default pool; the writes' p99 is the figure.

/** Runs until the host interrupts it (5 s). */
const RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";
const INSERT = "INSERT INTO events (user_id, kind, at) VALUES (?, ?, ?)";
/** Concurrent runaway statements kept going on db A (the "three runaway CTEs"). */
const RUNAWAYS = 3;
/** Closed-loop writers on db B. */
const WRITERS = 4;

export interface IsolationServer {
  base: string;
  /** The query route of db A (runaways) and of db B (writes; has the `events` table). */
  queryA: string;
  queryB: string;
}

export interface WriteLatencies {
  writes: number;
  p50: number;
  p99: number;
  max: number;
  /** Runaway statements answered (400 interrupted) during the run. */
  interrupted: number;
  failures: number;
}

/** The first unexpected answer of a run, printed with the results. */
let firstFailure: string | null = null;

async function post(url: string, sql: string, params?: unknown[]): Promise<number> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sql, params }),
    });
    const text = await res.text();
    if (res.status !== 200 && res.status !== 400) firstFailure ??= `${res.status} ${text.slice(0, 200)}`;
    return res.status;
  } catch (err) {
    firstFailure ??= String((err as Error).cause ?? err);
    return 0;
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

/**
 * B's writes for `seconds`, with db A's runaways going (`neighbour`) or not. Every write issued
 * in the window is waited for, so a write stuck behind A counts with its whole wait.
 */
export async function measureWrites(
  server: IsolationServer,
  seconds: number,
  neighbour: boolean,
): Promise<WriteLatencies> {
  const end = performance.now() + seconds * 1000;
  let stop = false;
  let interrupted = 0;
  let failures = 0;
  const runaways = neighbour
    ? Array.from({ length: RUNAWAYS }, async () => {
        while (!stop) {
          const status = await post(`${server.base}${server.queryA}`, RUNAWAY);
          if (status === 400) interrupted++;
          else failures++;
        }
      })
    : [];
  // The runaways reach the host first.
  if (neighbour) await new Promise((resolve) => setTimeout(resolve, 200));
  const latencies: number[] = [];
  let n = 0;
  const writers = Array.from({ length: WRITERS }, async () => {
    while (performance.now() < end) {
      const i = n++;
      const t0 = performance.now();
      const status = await post(`${server.base}${server.queryB}`, INSERT, [(i % 1000) + 1, "iso", i]);
      if (status === 200) latencies.push(performance.now() - t0);
      else failures++;
    }
  });
  await Promise.all(writers);
  stop = true;
  await Promise.all(runaways);
  latencies.sort((a, b) => a - b);
  if (firstFailure !== null) console.error(`isolation: first failure: ${firstFailure}`);
  firstFailure = null;
  return {
    writes: latencies.length,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
    max: latencies[latencies.length - 1] ?? NaN,
    interrupted,
    failures,
  };
}
