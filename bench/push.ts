// push benchmark: `prim push` of a ~1 GiB group (mostly storage objects, plus a 200 MiB db, a
// kv and a vault) from a local data directory to the cloud's apps/api on loopback, against a
// plain `cp -r` of the same files (the group's SQLite files and blobs) on this disk, in the same
// run, alternating. The push figure is the whole command: export, hash, upload, import.
// BENCH_PUSH_MIB sets the group's size (default 1024).
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Engine, LOCAL_PRINCIPAL as local } from "@prim/engine";
import { forkTs } from "./lib/child.js";
import { benchPushMib } from "./lib/knobs.js";
import { printFail, printRatio } from "./lib/verdict.js";
import type { ChildMessage, ParentMessage } from "./push-server.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const OBJECT_BYTES = 4 * 1024 * 1024;
const ROUNDS = 2;
/** What a push keeps of a plain copy's speed at least (it reads, hashes and writes more than once). */
const TARGET = 0.25;

async function seed(dataDir: string, totalMib: number): Promise<void> {
  const engine = Engine.openLocal({ dataDir });
  try {
    await engine.invoke(local, "group.create", null, { name: "bench" });
    const create = (name: string, type: string) =>
      engine.invoke<{ id: string }>(local, "primitive.create", null, { name, type, group: "bench" });
    const db = await create("data", "db");
    const dbMib = Math.min(200, Math.floor(totalMib / 5));
    await engine.invoke(local, "db.exec", db.id, { sql: "CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB)" });
    await engine.invoke(local, "db.exec", db.id, {
      sql: `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ${dbMib}) INSERT INTO blobs SELECT x, randomblob(1048576) FROM n`,
    });
    const store = await create("objects", "storage");
    const objects = Math.floor(((totalMib - dbMib) * 1024 * 1024) / OBJECT_BYTES);
    for (let i = 0; i < objects; i++) {
      await engine.invoke(local, "storage.put", store.id, {
        key: `obj/${i}.bin`,
        body: Readable.from([randomBytes(OBJECT_BYTES)]),
        content_type: "application/octet-stream",
        metadata: { n: String(i) },
      });
    }
    const kv = await create("settings", "kv");
    for (let i = 0; i < 100; i++) await engine.invoke(local, "kv.set", kv.id, { key: `k${i}`, value: { i } });
    const vault = await create("secrets", "vault");
    await engine.invoke(local, "vault.put", vault.id, { name: "TOKEN", value: randomBytes(24).toString("hex") });
  } finally {
    await engine.close();
  }
}

function bytesUnder(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    total += entry.isDirectory() ? bytesUnder(full) : statSync(full).size;
  }
  return total;
}

/** `cp -r` of the group's files (primitive files and blobs); answers MB/s. */
function copy(dataDir: string, bytes: number): number {
  const dest = mkdtempSync(join(tmpdir(), "prim-bench-push-cp-"));
  try {
    const started = process.hrtime.bigint();
    execFileSync("cp", ["-r", join(dataDir, "primitives"), join(dataDir, "blobs"), dest]);
    execFileSync("sync", ["-f", dest]);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return bytes / 1e6 / seconds;
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
}

/** `prim push` to a fresh cloud group; answers MB/s of the archive over the whole command. */
function push(dataDir: string, port: number, key: string, target: string): { mbps: number; bytes: number } {
  const started = process.hrtime.bigint();
  const run = spawnSync(
    process.execPath,
    [
      join(root, "packages/cli/bin/prim.js"),
      "push",
      "bench",
      "--to",
      target,
      "--data",
      dataDir,
      "--api",
      `http://127.0.0.1:${port}`,
      "--json",
    ],
    { env: { ...process.env, PRIM_API_KEY: key }, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (run.status !== 0) throw new Error(`prim push failed (${run.status}): ${run.stderr}`);
  const out = JSON.parse(run.stdout) as { bytes: number };
  return { mbps: out.bytes / 1e6 / seconds, bytes: out.bytes };
}

export async function run(): Promise<void> {
  const totalMib = benchPushMib(1024);
  const dataDir = mkdtempSync(join(tmpdir(), "prim-bench-push-local-"));
  const child = forkTs<ParentMessage, ChildMessage>(join(root, "bench/push-server.ts"));
  try {
    const ready = await child.next("ready");
    console.log(
      `push bench: a ${totalMib} MiB group (db ${Math.min(200, Math.floor(totalMib / 5))} MiB, 4 MiB objects, kv, vault)`,
    );
    await seed(dataDir, totalMib);
    const bytes = bytesUnder(join(dataDir, "primitives")) + bytesUnder(join(dataDir, "blobs"));
    console.log(`  group files: ${(bytes / 1024 / 1024).toFixed(1)} MiB; ${ROUNDS} rounds of cp -r, then prim push`);
    const cps: number[] = [];
    const pushes: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      cps.push(copy(dataDir, bytes));
      const pushed = push(dataDir, ready.port, ready.key, `bench-${round}`);
      pushes.push(pushed.mbps);
      console.log(
        `  round ${round}: cp ${cps.at(-1)?.toFixed(1)} MB/s, push ${pushed.mbps.toFixed(1)} MB/s (archive ${(pushed.bytes / 1024 / 1024).toFixed(1)} MiB)`,
      );
    }
    const best = (xs: number[]) => Math.max(...xs);
    console.log(`RESULT push_mb_per_s ${best(pushes).toFixed(1)} MB/s`);
    console.log(`RESULT cp_mb_per_s ${best(cps).toFixed(1)} MB/s`);
    printRatio("push_vs_cp", best(pushes) / best(cps), TARGET);
  } catch (err) {
    printFail(`push bench: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
