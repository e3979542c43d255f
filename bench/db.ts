// db benchmark: point-select and single-row insert through `POST /query` on the real local
// engine (SQL host process included), against the same statements through better-sqlite3
// directly and a bare Fastify POST route answering the same bytes. Servers run in a child
// process (bench/kv-server.ts hosts the engine and the bare routes).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import type { ChildMessage, ParentMessage } from "./kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { failOnErrors, type Phase, runPhases } from "./lib/load.js";

type PhaseName = "bare_post" | "db_select" | "db_insert";

const benchDir = dirname(fileURLToPath(import.meta.url));
const ROWS = 1000;
const CONNECTIONS = 50;
const JSON_HEADERS = { "content-type": "application/json" };
const SELECT = "SELECT id, name, email FROM users WHERE id = ?";
const INSERT = "INSERT INTO events (user_id, kind, at) VALUES (?, ?, ?)";
const SCHEMA = [
  "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL)",
  "CREATE TABLE events (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL)",
];

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
function direct(seconds: number): { select: number; insert: number } {
  const dir = mkdtempSync(join(tmpdir(), "prim-bench-db-"));
  const db = new Database(join(dir, "d.sqlite"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  for (const sql of SCHEMA) db.exec(sql);
  const add = db.prepare("INSERT INTO users (id, name, email) VALUES (?, ?, ?)");
  db.transaction(() => {
    for (let i = 1; i <= ROWS; i++) add.run(i, `user ${i}`, `user${i}@example.com`);
  })();
  const rate = (fn: (i: number) => void) => {
    const end = performance.now() + seconds * 1000;
    let n = 0;
    while (performance.now() < end) fn(n++);
    return n / seconds;
  };
  const select = db.prepare(SELECT);
  const insert = db.prepare(INSERT);
  const out = {
    select: rate((i) => select.get((i % ROWS) + 1)),
    insert: rate((i) => insert.run((i % ROWS) + 1, "click", i)),
  };
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

export async function run(): Promise<void> {
  const durationSeconds = benchSeconds(10);
  const warmupSeconds = Math.min(2, durationSeconds);
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  try {
    const ready = await child.next("ready");
    const base = `http://127.0.0.1:${ready.enginePort}`;
    const bare = `http://127.0.0.1:${ready.barePort}`;
    await call("POST", `${base}/v1/groups`, { name: "bench" });
    const { id } = JSON.parse(
      await call("POST", `${base}/v1/primitives`, { name: "bench", type: "db", group: "bench" }),
    ) as {
      id: string;
    };
    const query = `/v1/primitives/${id}/query`;
    const statements = SCHEMA.map((sql) => ({ sql }));
    await call("POST", `${base}/v1/primitives/${id}/batch`, { statements });
    for (let i = 1; i <= ROWS; i += 100) {
      const rows = Array.from({ length: 100 }, (_, j) => ({
        sql: "INSERT INTO users (id, name, email) VALUES (?, ?, ?)",
        params: [i + j, `user ${i + j}`, `user${i + j}@example.com`],
      }));
      await call("POST", `${base}/v1/primitives/${id}/batch`, { statements: rows });
    }
    const selectBody = (i: number) => JSON.stringify({ sql: SELECT, params: [(i % ROWS) + 1] });
    const insertBody = (i: number) => JSON.stringify({ sql: INSERT, params: [(i % ROWS) + 1, "click", i] });
    // The bare route answers with exactly the bytes of a point-select answer.
    const answer = await call("POST", `${base}${query}`, JSON.parse(selectBody(0)));
    child.send({ type: "bodies", get: answer, put: answer });
    await child.next("bodies-set");
    console.log(`db bench: ${ROWS} rows, ${CONNECTIONS} connections; answer ${Buffer.byteLength(answer)} B`);

    const indexes = Array.from({ length: ROWS }, (_, i) => i);
    const post = (path: string, body: string) => ({ method: "POST" as const, path, headers: JSON_HEADERS, body });
    const phases: Phase<PhaseName>[] = [
      { name: "bare_post", url: bare, requests: indexes.map((i) => post("/bare", selectBody(i))) },
      { name: "db_select", url: base, requests: indexes.map((i) => post(query, selectBody(i))) },
      { name: "db_insert", url: base, requests: indexes.map((i) => post(query, insertBody(i))) },
    ];
    const serverCpuMicros = () => childCpuMicros(child);
    const results = await runPhases(phases, {
      connections: CONNECTIONS,
      warmupSeconds,
      durationSeconds,
      serverCpuMicros,
    });
    const sqlite = direct(Math.min(3, durationSeconds));

    for (const name of ["db_select", "db_insert", "bare_post"] as const) {
      const m = results[name];
      console.log(`RESULT ${name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${name}_p99 ${m.p99.toFixed(2)} ms`);
    }
    console.log(`RESULT sqlite_direct_select ${sqlite.select.toFixed(0)} ops/s`);
    console.log(`RESULT sqlite_direct_insert ${sqlite.insert.toFixed(0)} ops/s`);
    const ratio = (a: number, b: number) => (b > 0 ? a / b : 0).toFixed(2);
    console.log(`RATIO db_select_vs_bare ${ratio(results.db_select.rps, results.bare_post.rps)} (target 0.50)`);
    console.log(`RATIO db_insert_vs_bare ${ratio(results.db_insert.rps, results.bare_post.rps)} (target none)`);
    console.log(`RATIO db_select_vs_sqlite_direct ${ratio(results.db_select.rps, sqlite.select)} (target none)`);
    console.log(`RATIO db_insert_vs_sqlite_direct ${ratio(results.db_insert.rps, sqlite.insert)} (target none)`);

    failOnErrors(results);
  } finally {
    await child.stop();
  }
}
