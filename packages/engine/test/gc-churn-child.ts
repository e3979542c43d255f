// A separate process for gc-churn.test.ts (run with `node --expose-gc --import tsx` and the
// source hooks): churns better-sqlite3 statements through real engines on the data directory
// argv[2], the way a long `prim dev` does, collecting between awaits, then exits on its own.
// Prints "ops <n> statements <n> sql <n>": operations answered, statements prepared on this thread,
// and distinct SQL texts sent in batches to the SQL host child (which prepares each anew).
//
// Where the statements come from: every `primitive.list` and `audit.list` prepares its query and
// drops it; kv files cycle through fewer open handles than there are kv primitives, so their
// statements (prepared per open file) are dropped with each eviction; every engine close drops
// the rest and ends the audit writer thread and the SQL host child. better-sqlite3 12 built for
// Node >= 24.19 aborted this process within its first 300 statements when run as the test runs it
// (--max-semi-space-size=1): "Assertion failed: (env) != nullptr" in
// node::RemoveEnvironmentCleanupHook, from ~Statement in a collection started by an allocation.
import { LOCAL_PRINCIPAL } from "@prim/wire";
import Database from "better-sqlite3";
import { Engine } from "../src/engine.js";

const [dataDir] = process.argv.slice(2) as [string];
const CYCLES = 2; // gc-churn.test.ts counts the operations of exactly these numbers
const ROUNDS = 20;
const LISTS = 150; // catalog lists per round
const BATCH = 50; // distinct SQL texts per db.batch
const KV = 6; // kv primitives per cycle, through 4 open handles
const gc = globalThis.gc;
if (gc === undefined) throw new Error("run with --expose-gc");

let statements = 0;
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (this: Database.Database, source: string) {
  statements++;
  return prepare.call(this, source);
} as typeof prepare;

let ops = 0;
let sqlTexts = 0;
async function call<T>(engine: Engine, op: string, target: string | null, input: unknown): Promise<T> {
  const out = await engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
  ops++;
  return out;
}

for (let cycle = 0; cycle < CYCLES; cycle++) {
  const engine = Engine.openLocal({ dataDir, maxOpenFiles: 4 });
  const group = `g${cycle}`;
  await call(engine, "group.create", null, { name: group });
  const create = (name: string, type: string) =>
    call<{ id: string }>(engine, "primitive.create", null, { name, type, group });
  const kvs: { id: string }[] = [];
  for (let i = 0; i < KV; i++) kvs.push(await create(`kv${i}`, "kv"));
  const queue = await create("jobs", "queue");
  const db = await create("sql", "db");
  await call(engine, "db.exec", db.id, { sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)" });
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < LISTS; i++) {
      const filter = i % 3 === 0 ? { group } : i % 3 === 1 ? { type: "kv" } : { group, type: "kv" };
      await call(engine, "primitive.list", null, { ...filter, limit: 5 });
    }
    for (const kv of [kvs[round % KV], kvs[(round + 3) % KV]] as { id: string }[]) {
      await call(engine, "kv.set", kv.id, { key: `k${round}`, value: { round } });
      await call(engine, "kv.get", kv.id, { key: `k${round}` });
    }
    await call(engine, "queue.send", queue.id, { queue: "q", body: { round } });
    await call(engine, "queue.receive", queue.id, { queue: "q" });
    // Distinct SQL texts: the SQL host child prepares each anew.
    await call(engine, "db.exec", db.id, { sql: `INSERT INTO t (v) VALUES ('${cycle}-${round}')` });
    const batch = Array.from({ length: BATCH }, () => ({ sql: `SELECT count(*) AS n, ${sqlTexts++} AS r FROM t` }));
    await call(engine, "db.batch", db.id, { statements: batch });
    if (round % 5 === 0) await call(engine, "audit.list", null, { group, limit: 5 });
    if (round % 5 === 4) await gc({ type: "major", execution: "async" });
    else gc({ type: "minor" });
  }
  for (const kv of kvs.slice(0, KV / 2)) await call(engine, "primitive.delete", kv.id, {});
  await engine.close();
  gc();
}

console.log(`ops ${ops} statements ${statements} sql ${sqlTexts}`);
