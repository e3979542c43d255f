// Object transfers for bench/storage.ts: HTTP PUT/GET of raw bodies against the engine, the
// same bytes written to / read from plain files, and a driver that runs them with a fixed
// number of workers (for a count of operations or for a time) and records what they moved.

import { createReadStream } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { Agent, request } from "node:http";

/** One operation: resolves with the bytes it moved; throws on any failure (non-2xx included). */
export type Op = (i: number) => Promise<number>;

export interface Driven {
  ops: number;
  bytes: number;
  seconds: number;
  failures: number;
  firstError: string | null;
  /** Per-operation latencies (ms), sorted. */
  latencies: Float64Array;
  /** Fraction of one core this process / the server used while the operations ran. */
  loadCpu: number;
  serverCpu: number;
}

export interface DriveOptions {
  concurrency: number;
  /** Run operations first..first+count-1 (first defaults to 0), or … */
  first?: number;
  count?: number;
  /** … keep starting operations (i counting up) until this many seconds have passed. */
  seconds?: number;
  /** Total CPU time (µs) the server has used so far; NaN when there is no server. */
  serverCpuMicros?: () => Promise<number>;
}

export async function drive(op: Op, options: DriveOptions): Promise<Driven> {
  const { concurrency, first = 0 } = options;
  const end = first + (options.count ?? Number.POSITIVE_INFINITY);
  const serverCpu = options.serverCpuMicros ?? (async () => Number.NaN);
  const latencies: number[] = [];
  let next = first;
  let bytes = 0;
  let failures = 0;
  let firstError: string | null = null;
  const server0 = await serverCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = options.seconds === undefined ? Number.POSITIVE_INFINITY : t0 + options.seconds * 1000;
  const worker = async (): Promise<void> => {
    while (next < end && performance.now() < deadline) {
      const i = next++;
      const start = performance.now();
      try {
        const moved = await op(i); // not `bytes += await …`: that reads `bytes` before the await
        bytes += moved;
        latencies.push(performance.now() - start);
      } catch (err) {
        failures++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMicros = (performance.now() - t0) * 1000;
  const cpu = process.cpuUsage(cpu0);
  const server1 = await serverCpu();
  return {
    ops: latencies.length,
    bytes,
    seconds: wallMicros / 1e6,
    failures,
    firstError,
    latencies: Float64Array.from(latencies).sort(),
    loadCpu: (cpu.user + cpu.system) / wallMicros,
    serverCpu: (server1 - server0) / wallMicros,
  };
}

/** Several runs of one kind of operation as if they were one (CPU weighted by time). */
export function merge(parts: readonly Driven[]): Driven {
  const sum = (f: (d: Driven) => number) => parts.reduce((n, d) => n + f(d), 0);
  const seconds = sum((d) => d.seconds);
  const latencies = Float64Array.from(parts.flatMap((d) => Array.from(d.latencies))).sort();
  return {
    ops: sum((d) => d.ops),
    bytes: sum((d) => d.bytes),
    seconds,
    failures: sum((d) => d.failures),
    firstError: parts.find((d) => d.firstError !== null)?.firstError ?? null,
    latencies,
    loadCpu: sum((d) => d.loadCpu * d.seconds) / seconds,
    serverCpu: sum((d) => d.serverCpu * d.seconds) / seconds,
  };
}

/** Keep-alive HTTP client for raw object bodies; `maxSockets` caps connections per host. */
export function objectClient(maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const exchange = (method: "GET" | "PUT", url: string, body?: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const headers: Record<string, string | number> =
        body === undefined ? {} : { "content-type": "application/octet-stream", "content-length": body.length };
      const req = request(url, { method, agent, headers }, (res) => {
        let received = 0;
        res.on("data", (chunk: Buffer) => {
          received += chunk.length;
        });
        res.on("error", reject);
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(body === undefined ? received : body.length);
          else reject(new Error(`${method} ${url} → ${status}`));
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  return {
    put: (url: string, body: Buffer) => exchange("PUT", url, body),
    /** Reads the whole body, discarding it; `expected` bytes or it counts as a failure. */
    get: async (url: string, expected: number) => {
      const received = await exchange("GET", url);
      if (received !== expected) throw new Error(`GET ${url}: ${received} bytes, expected ${expected}`);
      return received;
    },
    close: () => agent.destroy(),
  };
}

/** Writes a file the way a durable store would: the whole buffer, then (optionally) fsync. */
export async function writeFileSynced(path: string, body: Buffer, fsync: boolean): Promise<number> {
  const file = await open(path, "w", 0o600);
  try {
    await file.writeFile(body);
    if (fsync) await file.sync();
  } finally {
    await file.close();
  }
  return body.length;
}

/** Streams a file (64 KiB chunks, as the engine serves blobs), counting and discarding bytes. */
export async function streamFile(path: string): Promise<number> {
  let received = 0;
  for await (const chunk of createReadStream(path)) received += (chunk as Buffer).length;
  return received;
}

export async function readWholeFile(path: string): Promise<number> {
  return (await readFile(path)).length;
}
