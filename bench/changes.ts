// Change feeds benchmark (issue 42): over the local engine's real HTTP (startDevServer, in this
// process), two measurements, each against a peer in the same run, interleaved:
//   1. Wake latency: a client long-polls the feed of a kv (`GET …/changes?wait=`), another makes
//      a PUT; the time from the PUT's send to the poll's answer. Peer: the queue's long poll
//      (`POST …/receive` with `wait`) woken by a send — the engine's other wake path.
//   2. Feed read throughput: a 100,000-change log read in pages of 1,000 (entries/s). Peer: the
//      same kv's 100,000 keys listed in pages of 1,000.
// Targets (fixed before the first run): the feed's p99 wake at most twice the queue's (ratio
// queue p99 / feed p99 ≥ 0.5), and its read throughput at least half the key listing's (≥ 0.5).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDevServer } from "@prim/cli";
import { benchSeconds } from "./lib/knobs.js";
import { printRatio } from "./lib/verdict.js";

const TARGET_WAKE_P99 = 0.5;
const TARGET_READ = 0.5;
const ENTRIES = 100_000;
const PAGE = 1_000;

type Json = Record<string, unknown>;

async function api(base: string, method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Json;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

/** One feed wake: poll with `after` = the head, then PUT; ms from the PUT's send to the answer. */
async function feedWake(base: string, kv: string, after: { cursor: string }, i: number): Promise<number> {
  const poll = api(base, "GET", `/v1/primitives/${kv}/changes?after=${encodeURIComponent(after.cursor)}&wait=10s`);
  await new Promise((r) => setTimeout(r, 2)); // the poll is parked
  const sent = performance.now();
  await api(base, "PUT", `/v1/primitives/${kv}/keys/w${i}`, { value: i });
  const page = (await poll) as unknown as { data: unknown[]; cursor: string };
  const took = performance.now() - sent;
  if (page.data.length !== 1) throw new Error(`the feed answered ${page.data.length} entries`);
  after.cursor = page.cursor;
  return took;
}

/** One queue wake: receive with `wait`, then send; ms from the send's send to the job. */
async function queueWake(base: string, queue: string, i: number): Promise<number> {
  const poll = api(base, "POST", `/v1/primitives/${queue}/queues/q/receive`, { wait: "10s", lease: "30s" });
  await new Promise((r) => setTimeout(r, 2));
  const sent = performance.now();
  await api(base, "POST", `/v1/primitives/${queue}/queues/q/messages`, { body: { i } });
  const got = (await poll) as unknown as { data: { id: string; lease_token: string }[] };
  const took = performance.now() - sent;
  const job = got.data[0];
  if (job === undefined) throw new Error("the receive answered no job");
  await api(base, "POST", `/v1/primitives/${queue}/queues/q/messages/${job.id}/ack`, { lease_token: job.lease_token });
  return took;
}

async function readAll(
  base: string,
  path: (after: string | undefined) => string,
  cursorOf: (p: Json) => string | undefined,
) {
  let after: string | undefined;
  let n = 0;
  const start = performance.now();
  for (;;) {
    const page = await api(base, "GET", path(after));
    const data = page.data as unknown[];
    n += data.length;
    if (data.length < PAGE) break;
    after = cursorOf(page);
  }
  return { n, seconds: (performance.now() - start) / 1000 };
}

export async function run(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-bench-changes-"));
  const server = await startDevServer({ port: 0, host: "127.0.0.1", dataDir });
  const base = server.url;
  try {
    await api(base, "POST", "/v1/groups", { name: "bench" });
    const kv = (await api(base, "POST", "/v1/primitives", { name: "feed", type: "kv", group: "bench" })).id as string;
    const queue = (await api(base, "POST", "/v1/primitives", { name: "jobs", type: "queue", group: "bench" }))
      .id as string;
    const head = { cursor: ((await api(base, "GET", `/v1/primitives/${kv}/changes`)) as { cursor: string }).cursor };
    // 1. Wake latency, interleaved in rounds.
    const samples = Math.max(50, Math.round(benchSeconds(10) * 30));
    const feed: number[] = [];
    const peer: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < samples / 4; i++) feed.push(await feedWake(base, kv, head, round * 10_000 + i));
      for (let i = 0; i < samples / 4; i++) peer.push(await queueWake(base, queue, round * 10_000 + i));
    }
    feed.sort((a, b) => a - b);
    peer.sort((a, b) => a - b);
    for (const [name, xs] of [
      ["feed", feed],
      ["queue", peer],
    ] as const) {
      console.log(
        `${name} wake: n=${xs.length} p50 ${percentile(xs, 50).toFixed(2)} ms, p99 ${percentile(xs, 99).toFixed(2)} ms`,
      );
    }
    console.log(`RESULT changes_wake_p50 ${percentile(feed, 50).toFixed(2)} ms`);
    console.log(`RESULT changes_wake_p99 ${percentile(feed, 99).toFixed(2)} ms`);
    printRatio("changes_wake_p99_queue_over_feed", percentile(peer, 99) / percentile(feed, 99), TARGET_WAKE_P99);
    // 2. Read throughput: fill the log (and the keys) in batches of 100.
    for (let i = 0; i < ENTRIES; i += 100) {
      const items = Array.from({ length: 100 }, (_, j) => ({ key: `k${String(i + j).padStart(6, "0")}`, value: j }));
      await api(base, "POST", `/v1/primitives/${kv}/mset`, { items });
    }
    const reads = { feed: { n: 0, seconds: 0 }, list: { n: 0, seconds: 0 } };
    for (let round = 0; round < 2; round++) {
      const f = await readAll(
        base,
        (after) =>
          `/v1/primitives/${kv}/changes?limit=${PAGE}${after === undefined ? "" : `&after=${encodeURIComponent(after)}`}`,
        (p) => p.cursor as string,
      );
      const l = await readAll(
        base,
        (after) =>
          `/v1/primitives/${kv}/keys?limit=${PAGE}${after === undefined ? "" : `&cursor=${encodeURIComponent(after)}`}`,
        (p) => (p.next_cursor ?? p.cursor) as string | undefined,
      );
      reads.feed.n += f.n;
      reads.feed.seconds += f.seconds;
      reads.list.n += l.n;
      reads.list.seconds += l.seconds;
    }
    const feedRate = reads.feed.n / reads.feed.seconds;
    const listRate = reads.list.n / reads.list.seconds;
    console.log(`feed read: ${Math.round(feedRate)} entries/s; key listing: ${Math.round(listRate)} keys/s`);
    console.log(`RESULT changes_read ${Math.round(feedRate)} entries/s`);
    printRatio("changes_read_vs_key_list", feedRate / listRate, TARGET_READ);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
