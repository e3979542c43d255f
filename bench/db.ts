// db benchmark: point-select, a 10-row range scan, a 10-row indexed lookup and a single-row
// insert through `POST /query` on the real local engine (SQL hosts included), against the same
// statements through better-sqlite3 directly and a bare Fastify POST route answering the
// point-select's bytes (the ceiling). Phases run interleaved over rounds (A, B, A, B). Then
// isolation: p99 of point writes on db B while db A runs 5 s statements, on an engine with one
// SQL host and on one with the default pool. Servers run in child processes (bench/kv-server.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import type { ChildMessage, ParentMessage } from "./kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { type IsolationServer, measureWrites, type WriteLatencies } from "./lib/db-isolation.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { failOnErrors, type Measured, measure, type Phase, printTable } from "./lib/load.js";

type PhaseName = "bare_post" | "db_select" | "db_range" | "db_index" | "db_insert";
type Server = ReturnType<typeof forkTs<ParentMessage, ChildMessage>>;

const benchDir = dirname(fileURLToPath(import.meta.url));
const ROWS = 1000;
const CONNECTIONS = 50;
const JSON_HEADERS = { "content-type": "application/json" };
/** Rounds the compared phases run in, interleaved (bare, select, …, bare, select, …). */
const ROUNDS = 2;
const SELECT = "SELECT id, name, email FROM users WHERE id = ?";
/** 10 rows by primary-key range, and 10 rows by a non-unique index (TEAMS teams of 10). */
const RANGE = "SELECT id, name, email FROM users WHERE id BETWEEN ? AND ? + 9";
const BY_TEAM = "SELECT id, name, email FROM users WHERE team = ?";
const TEAMS = 100;
const INSERT = "INSERT INTO events (user_id, kind, at) VALUES (?, ?, ?)";
const SCHEMA = [
  "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, team INTEGER NOT NULL)",
  "CREATE INDEX users_team ON users (team)",
  "CREATE TABLE events (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL)",
];
const ADD_USER = "INSERT INTO users (id, name, email, team) VALUES (?, ?, ?, ?)";
const userRow = (id: number) => [id, `user ${id}`, `user${id}@example.com`, id % TEAMS];
/** B's write p99 while A runs runaways, over B's quiet p99: at most 5× (default pool). */
const ISOLATION_TARGET = 0.2;

async function call(method: string, url: string, body?: unknown): Promise<string> {
  const res = await fetch(url, {
    method,
    headers: JSON_HEADERS,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text}`);
  return text;
}

/** Same statements through better-sqlite3 in this process: the storage engine's own speed. */
function direct(seconds: number): { select: number; range: number; index: number; insert: number } {
  const dir = mkdtempSync(join(tmpdir(), "prim-bench-db-"));
  const db = new Database(join(dir, "d.sqlite"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  for (const sql of SCHEMA) db.exec(sql);
  const add = db.prepare(ADD_USER);
  db.transaction(() => {
    for (let i = 1; i <= ROWS; i++) add.run(...userRow(i));
  })();
  const rate = (fn: (i: number) => void) => {
    const end = performance.now() + seconds * 1000;
    let n = 0;
    while (performance.now() < end) fn(n++);
    return n / seconds;
  };
  const select = db.prepare(SELECT);
  const range = db.prepare(RANGE);
  const byTeam = db.prepare(BY_TEAM);
  const insert = db.prepare(INSERT);
  const out = {
    select: rate((i) => select.get((i % ROWS) + 1)),
    range: rate((i) => range.all((i % (ROWS - 9)) + 1, (i % (ROWS - 9)) + 1)),
    index: rate((i) => byTeam.all(i % TEAMS)),
    insert: rate((i) => insert.run((i % ROWS) + 1, "click", i)),
  };
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

/** The engine's pool-size knob (engine README, db), set per server child. */
const SQL_HOSTS_ENV = "PRIM_SQL_HOSTS";

/** Starts a server child; `sqlHosts` sets PRIM_SQL_HOSTS for it (default: the engine's own). */
async function startServer(sqlHosts?: number): Promise<{ child: Server; base: string; bare: string }> {
  const env = process.env;
  const saved = env[SQL_HOSTS_ENV];
  if (sqlHosts === undefined) delete env[SQL_HOSTS_ENV];
  else env[SQL_HOSTS_ENV] = String(sqlHosts);
  try {
    // fork() copies the environment as it is now.
    const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "kv-server.ts"), {
      cpuProfileDir: cpuProfileDir(),
    });
    const ready = await child.next("ready");
    return { child, base: `http://127.0.0.1:${ready.enginePort}`, bare: `http://127.0.0.1:${ready.barePort}` };
  } finally {
    if (saved === undefined) delete env[SQL_HOSTS_ENV];
    else env[SQL_HOSTS_ENV] = saved;
  }
}

/** A db primitive `name` with the schema and ROWS users; its query route. */
async function seedDb(base: string, name: string): Promise<string> {
  const { id } = JSON.parse(await call("POST", `${base}/v1/primitives`, { name, type: "db", group: "bench" })) as {
    id: string;
  };
  const statements = SCHEMA.map((sql) => ({ sql }));
  await call("POST", `${base}/v1/primitives/${id}/batch`, { statements });
  for (let i = 1; i <= ROWS; i += 100) {
    const rows = Array.from({ length: 100 }, (_, j) => ({ sql: ADD_USER, params: userRow(i + j) }));
    await call("POST", `${base}/v1/primitives/${id}/batch`, { statements: rows });
  }
  return `/v1/primitives/${id}/query`;
}

/** Mean of the rounds' figures (rps, percentiles, CPU); counts are summed. */
function combine<Name extends string>(rounds: Measured<Name>[]): Measured<Name> {
  const mean = (f: (m: Measured<Name>) => number) => rounds.reduce((s, m) => s + f(m), 0) / rounds.length;
  const sum = (f: (m: Measured<Name>) => number) => rounds.reduce((s, m) => s + f(m), 0);
  return {
    name: (rounds[0] as Measured<Name>).name,
    rps: mean((m) => m.rps),
    p50: mean((m) => m.p50),
    p99: mean((m) => m.p99),
    ok: sum((m) => m.ok),
    non2xx: sum((m) => m.non2xx),
    errors: sum((m) => m.errors),
    timeouts: sum((m) => m.timeouts),
    serverCpu: mean((m) => m.serverCpu),
    loadCpu: mean((m) => m.loadCpu),
  };
}

/** A RATIO line; a ratio under its target fails the run. */
function ratioLine(label: string, value: number, target: number | null): void {
  console.log(`RATIO ${label} ${value.toFixed(2)} (target ${target === null ? "none" : target.toFixed(2)})`);
  if (target !== null && !(value >= target)) {
    console.error(`FAIL ${label}: ${value.toFixed(2)} is under its target ${target.toFixed(2)}`);
    process.exitCode = 1;
  }
}

async function throughput(durationSeconds: number): Promise<void> {
  const warmupSeconds = Math.min(1, durationSeconds);
  const { child, base, bare } = await startServer();
  try {
    await call("POST", `${base}/v1/groups`, { name: "bench" });
    const query = await seedDb(base, "bench");
    const body = (sql: string, params: unknown[]) => JSON.stringify({ sql, params });
    const selectBody = (i: number) => body(SELECT, [(i % ROWS) + 1]);
    const rangeBody = (i: number) => body(RANGE, [(i % (ROWS - 9)) + 1, (i % (ROWS - 9)) + 1]);
    const teamBody = (i: number) => body(BY_TEAM, [i % TEAMS]);
    const insertBody = (i: number) => body(INSERT, [(i % ROWS) + 1, "click", i]);
    // The bare route answers with exactly the bytes of a point-select answer.
    const answer = await call("POST", `${base}${query}`, JSON.parse(selectBody(0)));
    const tenRows = await call("POST", `${base}${query}`, JSON.parse(rangeBody(0)));
    child.send({ type: "bodies", get: answer, put: answer });
    await child.next("bodies-set");
    console.log(
      `db bench: ${ROWS} rows, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${durationSeconds / ROUNDS} s; ` +
        `answer ${Buffer.byteLength(answer)} B (10 rows: ${Buffer.byteLength(tenRows)} B)`,
    );

    const indexes = Array.from({ length: ROWS }, (_, i) => i);
    const post = (path: string, b: string) => ({ method: "POST" as const, path, headers: JSON_HEADERS, body: b });
    const phases: Phase<PhaseName>[] = [
      { name: "bare_post", url: bare, requests: indexes.map((i) => post("/bare", selectBody(i))) },
      { name: "db_select", url: base, requests: indexes.map((i) => post(query, selectBody(i))) },
      { name: "db_range", url: base, requests: indexes.map((i) => post(query, rangeBody(i))) },
      { name: "db_index", url: base, requests: indexes.map((i) => post(query, teamBody(i))) },
      { name: "db_insert", url: base, requests: indexes.map((i) => post(query, insertBody(i))) },
    ];
    const options = {
      connections: CONNECTIONS,
      warmupSeconds,
      durationSeconds: durationSeconds / ROUNDS,
      serverCpuMicros: () => childCpuMicros(child),
    };
    const rounds = new Map<PhaseName, Measured<PhaseName>[]>(phases.map((p) => [p.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      const line: string[] = [];
      for (const phase of phases) {
        const m = await measure(phase, options);
        rounds.get(phase.name)?.push(m);
        line.push(`${phase.name} ${m.rps.toFixed(0)}`);
      }
      console.log(`round ${round}: ${line.join(", ")} req/s`);
    }
    const results = Object.fromEntries([...rounds].map(([name, ms]) => [name, combine(ms)])) as Record<
      PhaseName,
      Measured<PhaseName>
    >;
    printTable(phases.map((p) => results[p.name]));
    const sqlite = direct(Math.min(3, durationSeconds));

    for (const name of ["db_select", "db_range", "db_index", "db_insert", "bare_post"] as const) {
      const m = results[name];
      console.log(`RESULT ${name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${name}_p99 ${m.p99.toFixed(2)} ms`);
    }
    for (const [name, rate] of Object.entries(sqlite))
      console.log(`RESULT sqlite_direct_${name} ${rate.toFixed(0)} ops/s`);
    const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
    const perRound = (rounds.get("db_select") ?? []).map((m, i) =>
      ratio(m.rps, rounds.get("bare_post")?.[i]?.rps ?? 0),
    );
    console.log(`db_select_vs_bare by round: ${perRound.map((r) => r.toFixed(2)).join(", ")}`);
    ratioLine("db_select_vs_bare", ratio(results.db_select.rps, results.bare_post.rps), 0.5);
    ratioLine("db_range_vs_bare", ratio(results.db_range.rps, results.bare_post.rps), null);
    ratioLine("db_index_vs_bare", ratio(results.db_index.rps, results.bare_post.rps), null);
    ratioLine("db_insert_vs_bare", ratio(results.db_insert.rps, results.bare_post.rps), null);
    ratioLine("db_select_vs_sqlite_direct", ratio(results.db_select.rps, sqlite.select), null);
    ratioLine("db_range_vs_sqlite_direct", ratio(results.db_range.rps, sqlite.range), null);
    ratioLine("db_index_vs_sqlite_direct", ratio(results.db_index.rps, sqlite.index), null);
    ratioLine("db_insert_vs_sqlite_direct", ratio(results.db_insert.rps, sqlite.insert), null);
    failOnErrors(results);
  } finally {
    await child.stop();
  }
}

/** Isolation: B's point writes, quiet and beside A's runaways, with 1 host and the default pool. */
async function isolation(seconds: number): Promise<void> {
  const servers: { label: string; child: Server; server: IsolationServer }[] = [];
  try {
    for (const [label, hosts] of [
      ["pool1", 1],
      ["pooled", undefined],
    ] as const) {
      const { child, base } = await startServer(hosts);
      await call("POST", `${base}/v1/groups`, { name: "bench" });
      const queryB = await seedDb(base, "b");
      const queryA = await seedDb(base, "a");
      servers.push({ label, child, server: { base, queryA, queryB } });
    }
    console.log(
      `\nisolation: db B point writes (4 writers) while db A runs 3 statements stopped at 5 s; ${seconds} s runs`,
    );
    const runs: Record<string, WriteLatencies[]> = { quiet: [], pool1: [], pooled: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const { label, server } of servers) {
        if (label === "pooled") runs.quiet?.push(await measureWrites(server, seconds, false));
        runs[label]?.push(await measureWrites(server, seconds, true));
      }
    }
    let failures = 0;
    for (const [label, list] of Object.entries(runs)) {
      const p99 = Math.max(...list.map((r) => r.p99));
      const p50 = list.reduce((s, r) => s + r.p50, 0) / list.length;
      const writes = list.reduce((s, r) => s + r.writes, 0);
      const interrupted = list.reduce((s, r) => s + r.interrupted, 0);
      failures += list.reduce((s, r) => s + r.failures, 0);
      console.log(
        `${label.padEnd(7)} writes ${writes}, p50 ${p50.toFixed(2)} ms, p99 ${list.map((r) => r.p99.toFixed(1)).join(" / ")} ms, A interrupted ${interrupted}`,
      );
      console.log(`RESULT db_b_write_p99_${label} ${p99.toFixed(2)} ms`);
    }
    const worst = (label: string) => Math.max(...(runs[label] ?? []).map((r) => r.p99));
    ratioLine("db_b_write_p99_quiet_vs_neighbour_pool1", worst("quiet") / worst("pool1"), null);
    ratioLine("db_b_write_p99_quiet_vs_neighbour_pooled", worst("quiet") / worst("pooled"), ISOLATION_TARGET);
    if (failures > 0) {
      console.error(`FAIL isolation: ${failures} requests failed`);
      process.exitCode = 1;
    }
  } finally {
    await Promise.all(servers.map((s) => s.child.stop()));
  }
}

export async function run(): Promise<void> {
  const durationSeconds = benchSeconds(10);
  await throughput(durationSeconds);
  await isolation(Math.max(6, Math.min(10, durationSeconds)));
}
