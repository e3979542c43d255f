// storage benchmark: object PUT/GET over the real local engine's REST API (4 KiB under load,
// 16 MiB in sequence) against the raw file system moving the same bytes in the same pattern,
// in the same run. The engine runs in a child process (bench/storage-server.ts); the load
// generator and the file-system baseline run here.
import { execFileSync } from "node:child_process";
import { randomFillSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { leanGetClient } from "./lib/lean-get.js";
import { measureSlice, mergeSlices, ROUNDS, type Slice } from "./lib/load.js";
import * as io from "./lib/objects.js";
import { fromDriven, fromMeasured, printResults, printTable, type Ratio, type Row } from "./lib/report.js";
import type { ChildMessage, ParentMessage } from "./storage-server.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const SMALL = 4 * 1024;
const LARGE = 16 * 1024 * 1024;
const SMALL_KEYS = 1000;
const SMALL_BODIES = 64; // distinct random 4 KiB bodies, cycled over the keys
const CONNECTIONS = 32;
const LARGE_CONCURRENCY = [1, 4] as const;
const BLOCK = 4; // 16 MiB: engine and file-system operations alternate in blocks of this many

/** `RATIO <engine>_vs_<baseline without size and concurrency>`, engine MB/s over baseline MB/s. */
const ratio = (engine: string, baseline: string, target: number | null = null): Ratio => {
  const label = `${engine}_vs_${baseline.replace(/_(4k|16m)(_c\d+)?$/, "")}`;
  return { label, engine, baseline, target };
};
const RATIOS: Ratio[] = [
  ratio("storage_get_16m", "fs_read_16m", 0.5),
  ratio("storage_put_16m", "fs_write_16m"),
  ratio("storage_put_16m", "fs_write_nosync_16m"),
  ratio("storage_get_16m_nodehttp", "fs_read_16m"),
  ratio("storage_get_16m_c4", "fs_read_16m_c4"),
  ratio("storage_put_16m_c4", "fs_write_16m_c4"),
  ratio("storage_get_4k", "fs_read_4k"),
  ratio("storage_put_4k", "fs_write_4k"),
  ratio("storage_put_4k", "fs_write_nosync_4k"),
];

// biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
const roundsEnv = Number(process.env.BENCH_ROUNDS);

interface Ctx {
  base: string;
  /** Path of the storage primitive's objects: `/v1/primitives/{id}/objects`. */
  objects: string;
  fsDir: string;
  http: ReturnType<typeof io.objectClient>;
  lean: ReturnType<typeof leanGetClient>;
  seconds: number;
  warmup: number;
  rounds: number;
  serverCpuMicros: () => Promise<number>;
  rows: Row[];
}

const randomBuffers = (count: number, size: number) =>
  Array.from({ length: count }, () => randomFillSync(Buffer.allocUnsafe(size)));
/** Dirty pages of one phase must not be written back during the next. */
const flush = () => execFileSync("sync");

function add(ctx: Ctx, row: Row): void {
  ctx.rows.push(row);
  console.log(`${row.name.padEnd(24)} ${row.opsPerSec.toFixed(1).padStart(8)} ops/s ${row.mbps.toFixed(1)} MB/s`);
}

async function call(method: string, url: string, body: unknown): Promise<string> {
  const res = await fetch(url, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text}`);
  return text;
}

/** 4 KiB: autocannon against the engine; workers over fs.promises for the files. */
async function small(ctx: Ctx): Promise<void> {
  const bodies = randomBuffers(SMALL_BODIES, SMALL);
  const body = (i: number) => bodies[i % SMALL_BODIES] as Buffer;
  const path = (i: number) => `${ctx.objects}/small-${i % SMALL_KEYS}`;
  const file = (i: number) => join(ctx.fsDir, `small-${i % SMALL_KEYS}`);
  const seed = (i: number) => ctx.http.put(`${ctx.base}${path(i)}`, body(i));
  const seeded = await io.drive(seed, { concurrency: CONNECTIONS, count: SMALL_KEYS });
  if (seeded.failures > 0) throw new Error(`seeding 4 KiB objects: ${seeded.firstError}`);

  const keys = Array.from({ length: SMALL_KEYS }, (_, i) => i);
  const octet = { "content-type": "application/octet-stream" };
  const puts = keys.map((i) => ({ method: "PUT" as const, path: path(i), headers: octet, body: body(i) }));
  const gets = keys.map((i) => ({ method: "GET" as const, path: path(i) }));
  const load = { connections: CONNECTIONS, serverCpuMicros: ctx.serverCpuMicros };
  const engine = (name: string, requests: { method: "GET" | "PUT"; path: string }[]): Step => {
    const phase = { name, url: ctx.base, requests };
    const slices: Slice[] = [];
    return {
      run: async (round) => {
        const warmup = round === 0 ? ctx.warmup : ctx.warmup / 4;
        slices.push(await measureSlice(phase, load, warmup, ctx.seconds / ROUNDS));
      },
      row: () => fromMeasured(mergeSlices(name, slices), SMALL),
    };
  };
  const files = (name: string, op: io.Op, after?: () => void): Step => {
    const parts: io.Driven[] = [];
    return {
      run: async (round) => {
        await io.drive(op, { concurrency: CONNECTIONS, seconds: Math.min(1, ctx.warmup) / (round === 0 ? 1 : 4) });
        parts.push(await io.drive(op, { concurrency: CONNECTIONS, seconds: ctx.seconds / ROUNDS }));
        after?.();
      },
      row: () => fromDriven(name, io.merge(parts)),
    };
  };
  await inTurn(ctx, [
    engine("storage_put_4k", puts),
    files("fs_write_4k", (i) => io.writeFileSynced(file(i), body(i), true)),
    // Its dirty pages are written back (sync, unmeasured) before the next slice starts.
    files("fs_write_nosync_4k", (i) => io.writeFileSynced(file(i), body(i), false), flush),
  ]);
  flush();
  await inTurn(ctx, [engine("storage_get_4k", gets), files("fs_read_4k", (i) => io.readWholeFile(file(i)))]);
}

/** One 4 KiB phase, measured in ROUNDS slices; `row` merges them. */
interface Step {
  run(round: number): Promise<void>;
  row(): Row;
}

/** The steps in turn, ROUNDS times (A, B, C, A, B, C), then one row for each. */
async function inTurn(ctx: Ctx, steps: Step[]): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (const step of steps) await step.run(round);
  }
  for (const step of steps) add(ctx, step.row());
}

/** Engine and file-system operations 0..rounds-1 alternating in blocks, so that load from
 * outside the benchmark falls on both alike; one row for each. */
async function interleaved(ctx: Ctx, concurrency: number, phases: Interleaved[]): Promise<void> {
  const parts = phases.map(() => [] as io.Driven[]);
  for (let first = 0; first < ctx.rounds; first += BLOCK) {
    const count = Math.min(BLOCK, ctx.rounds - first);
    for (const [j, [, op, server, after]] of phases.entries()) {
      const options = { concurrency, first, count, ...(server ? { serverCpuMicros: ctx.serverCpuMicros } : {}) };
      parts[j]?.push(await io.drive(op, options));
      after?.();
    }
  }
  for (const [j, [name]] of phases.entries()) add(ctx, fromDriven(name, io.merge(parts[j] ?? [])));
}

/** Name, operation, whether the engine serves it, and what to do (unmeasured) after each block. */
type Interleaved = [string, io.Op, boolean, (() => void)?];

/** 16 MiB: PUTs then GETs of `rounds` distinct objects at each concurrency. */
async function large(ctx: Ctx): Promise<void> {
  const bodies = randomBuffers(ctx.rounds, LARGE);
  const body = (i: number) => bodies[i] as Buffer;
  for (const c of [0, ...LARGE_CONCURRENCY]) {
    // Each pass stamps its number into the bodies: the engine's blob store is content-addressed,
    // and a body it already holds would cost it a rename only.
    for (const b of bodies) b.writeUInt32BE(c, 0);
    const path = (i: number) => `${ctx.objects}/large-c${c}-${i}`;
    const file = (i: number, sync = true) => join(ctx.fsDir, `large-c${c}-${i}${sync ? "" : "-nosync"}`);
    const put: io.Op = (i) => ctx.http.put(`${ctx.base}${path(i)}`, body(i));
    const get: io.Op = (i) => ctx.lean.get(path(i), LARGE);
    const getNodeHttp: io.Op = (i) => ctx.http.get(`${ctx.base}${path(i)}`, LARGE);
    const write: io.Op = (i) => io.writeFileSynced(file(i), body(i), true);
    const writeNoSync: io.Op = (i) => io.writeFileSynced(file(i, false), body(i), false);
    const read: io.Op = (i) => io.streamFile(file(i));
    if (c === 0) {
      // Warm-up, not measured: two of each.
      for (const op of [put, get, getNodeHttp, write, writeNoSync, read]) {
        await io.drive(op, { concurrency: 1, count: 2 });
      }
      flush();
      continue;
    }
    const suffix = c === 1 ? "" : `_c${c}`;
    await interleaved(ctx, c, [
      [`storage_put_16m${suffix}`, put, true],
      [`fs_write_16m${suffix}`, write, false],
      // Its dirty pages are written back (sync, unmeasured) before the next block starts.
      [`fs_write_nosync_16m${suffix}`, writeNoSync, false, flush],
    ]);
    flush();
    const gets: Interleaved[] = [
      [`storage_get_16m${suffix}`, get, true],
      [`fs_read_16m${suffix}`, read, false],
    ];
    // The same GETs through node:http, to show what the client costs (concurrency 1 only).
    if (c === 1) gets.push(["storage_get_16m_nodehttp", getNodeHttp, true]);
    await interleaved(ctx, c, gets);
  }
}

export async function run(): Promise<void> {
  const seconds = benchSeconds(5);
  const rounds = Number.isInteger(roundsEnv) && roundsEnv > 0 ? roundsEnv : 32;
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "storage-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  const fsDir = mkdtempSync(join(tmpdir(), "prim-bench-fs-"));
  const http = io.objectClient(CONNECTIONS);
  const rows: Row[] = [];
  let lean: ReturnType<typeof leanGetClient> | undefined;
  try {
    const { port, dataDir } = await child.next("ready");
    lean = leanGetClient("127.0.0.1", port);
    const base = `http://127.0.0.1:${port}`;
    const warmup = Math.min(2, seconds);
    console.log(`storage bench: engine data in ${dataDir}, file baseline in ${fsDir}`);
    console.log(`  4 KiB: ${SMALL_KEYS} keys, ${CONNECTIONS} connections/workers, ${warmup}s warm-up + ${seconds}s`);
    console.log(`  16 MiB: ${rounds} PUTs, then ${rounds} GETs, at concurrency ${LARGE_CONCURRENCY.join(" and ")}\n`);
    const serverCpuMicros = () => childCpuMicros(child);
    await call("POST", `${base}/v1/groups`, { name: "bench" });
    const created = await call("POST", `${base}/v1/primitives`, { name: "bench", type: "storage", group: "bench" });
    const objects = `/v1/primitives/${(JSON.parse(created) as { id: string }).id}/objects`;
    const ctx: Ctx = { base, objects, fsDir, http, lean, seconds, warmup, rounds, serverCpuMicros, rows };
    await small(ctx);
    await large(ctx);
  } finally {
    http.close();
    lean?.close();
    await child.stop();
    rmSync(fsDir, { recursive: true, force: true });
  }
  printTable(rows);
  printResults(rows, RATIOS);
}
