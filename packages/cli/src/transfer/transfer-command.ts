import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ImportResult } from "@prim/engine";
import { isValidName } from "@prim/engine";
import { resolveApi } from "../credentials.js";
import { runningEngine } from "../engine-file.js";
import { forgetEnvSecrets, readEnv } from "../env.js";
import { embedderFromEnv, openLocalEngine } from "../local-engine.js";
import { layoutOfFile, mbPerSecond, mib, Progress } from "./progress.js";
import { type ArchiveSide, type DownloadStart, EngineSide, HttpSide, TransferError } from "./sides.js";

type Direction = "push" | "pull";

const OPTIONS = {
  to: { type: "string" },
  data: { type: "string" },
  api: { type: "string" },
  key: { type: "string" },
  replace: { type: "boolean" },
  fresh: { type: "boolean" },
  json: { type: "boolean" },
} as const;

/** Attempts per transfer when the connection drops (each resumes where the last stopped). */
const ATTEMPTS = 6;

/** What a transfer left on disk to resume: the archive and what it is. */
interface TransferState {
  sha256: string;
  size: number;
  recipient: string;
  archive: string;
  created_at: number;
  expires_at?: number;
}

/** A dropped connection or a server fault: worth another attempt from where it stopped. */
function retryable(err: unknown): boolean {
  if (err instanceof TransferError) return err.status >= 500;
  // node:http's socket errors (every request of a transfer goes through it).
  return ["ECONNRESET", "EPIPE", "ECONNREFUSED", "ETIMEDOUT"].includes((err as { code?: string }).code ?? "");
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function withRetries<T>(what: string, attempt: (n: number) => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= ATTEMPTS || !retryable(err)) throw err;
      const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      console.error(`prim: ${what} interrupted (${cause}); resuming (attempt ${n + 1} of ${ATTEMPTS})`);
      await sleep(Math.min(500 * 2 ** (n - 1), 8000));
    }
  }
}

/** The local end: the running `prim dev` on the directory, else the directory opened here. */
function localSide(dataDir: string, env: ReturnType<typeof readEnv>): ArchiveSide {
  const running = runningEngine(dataDir);
  if (running !== null) return new HttpSide(`prim dev at ${running.url}`, running.url, env.PRIM_ROOT_TOKEN);
  return new EngineSide(dataDir, openLocalEngine({ dataDir, embedder: embedderFromEnv(env) }));
}

/**
 * `prim push <group>` / `prim pull <group>`: one group, every primitive of every type, moved
 * between the local engine and the cloud as a group archive — made on the source for the
 * target's transfer key, downloaded or uploaded with resumption, checked by sha256, imported.
 */
export async function transfer(direction: Direction, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  const env = readEnv();
  const api = resolveApi(env, { api: values.api, key: values.key });
  forgetEnvSecrets();
  const group = positionals[0];
  if (group === undefined || positionals.length > 1 || !isValidName(group)) {
    throw new Error(`usage: prim ${direction} <group> [--to <group>] [--replace] [--data DIR] [--api URL] [--json]`);
  }
  const target = values.to ?? group;
  if (!isValidName(target)) throw new Error("--to: 1-63 characters of a-z, 0-9, '-', '_', '.'");
  const dataDir = resolve(values.data ?? env.PRIM_DATA_DIR ?? ".prim");
  const cloud = new HttpSide(api.api, api.api, api.key);
  // Before any transfer: the key must reach every group and tool (export and import are account-level).
  const who = await cloud.whoami().catch((err: unknown) => {
    if (err instanceof TransferError && err.code === "invalid_token") {
      throw new Error(`${api.api} refused the key (invalid_token): run prim login again`);
    }
    throw err;
  });
  if (who.kind !== "workspace") {
    const scope = `${who.group === null ? "every group" : `group ${who.group.name}`}, tools ${who.tools?.join(",") ?? "every tool"}`;
    throw new Error(
      `prim ${direction} needs a workspace key (every group and tool); this key is scoped (${scope}): nothing was transferred`,
    );
  }
  const local = localSide(dataDir, env);
  try {
    const [source, sink] = direction === "push" ? [local, cloud] : [cloud, local];
    const result = await run(direction, source, sink, {
      group,
      target,
      replace: values.replace === true,
      fresh: values.fresh === true,
      stateDir: join(dataDir, "transfers"),
      stateKey: `${direction}-${group}-${target}-${createHash("sha256").update(api.api).digest("hex").slice(0, 8)}`,
    });
    report(direction, { ...result, source: source.label, sink: sink.label, group, target }, values.json === true);
  } finally {
    await local.close();
  }
}

interface RunOptions {
  group: string;
  target: string;
  replace: boolean;
  fresh: boolean;
  stateDir: string;
  stateKey: string;
}

interface RunResult {
  imported: ImportResult;
  bytes: number;
  resumedFrom: number;
  ms: number;
}

async function run(direction: Direction, source: ArchiveSide, sink: ArchiveSide, o: RunOptions): Promise<RunResult> {
  const started = Date.now();
  if ((await source.group(o.group)) === null) throw new Error(`${source.label} has no group '${o.group}'`);
  const existing = await sink.group(o.target);
  if (existing !== null && existing.primitives.length > 0 && !o.replace) {
    throw new Error(
      `group '${o.target}' on ${sink.label} has ${existing.primitives.length} primitive(s); pass --replace to replace the ones the archive names (each is snapshotted first): nothing was transferred`,
    );
  }
  const { recipient } = await sink.importStatus(o.target);
  mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
  const statePath = join(o.stateDir, `${o.stateKey}.json`);
  const archive = join(o.stateDir, `${o.stateKey}.tar`);
  /** This transfer's archive and state go: it cannot be resumed (or is done). */
  const discard = () => {
    rmSync(statePath, { force: true });
    rmSync(archive, { force: true });
  };
  let state = o.fresh ? null : readState(statePath, archive, recipient);
  const progress = new Progress(`${direction} ${o.group} → ${o.target}`);
  let resumedFrom = 0;

  // 1. The archive, here: made by the local engine (push) or downloaded from the cloud (pull).
  if (direction === "push" && state === null) {
    let start: DownloadStart | null = null;
    await source.exportTo(
      o.group,
      { recipient, dest: archive },
      (s) => (start = s),
      () => undefined,
    );
    const made = start as DownloadStart | null;
    if (made === null) throw new Error("the local export said nothing about its archive");
    state = { sha256: made.sha256, size: made.size, recipient, archive: made.id, created_at: Date.now() };
    writeState(statePath, state);
  }
  if (direction === "pull") {
    const have = state === null ? 0 : (statSync(archive, { throwIfNoEntry: false })?.size ?? 0);
    if (state === null || have < state.size) {
      resumedFrom = state === null ? 0 : have;
      await withRetries("download", async () => {
        const from = state === null ? 0 : (statSync(archive, { throwIfNoEntry: false })?.size ?? 0);
        await source.exportTo(
          o.group,
          { recipient, dest: archive, ...(state === null ? {} : { archive: state.archive, from }) },
          (s) => {
            state = {
              sha256: s.sha256,
              size: s.size,
              recipient,
              archive: s.id,
              created_at: Date.now(),
              expires_at: s.expiresAt,
            };
            writeState(statePath, state);
            progress.phase(s.size, from);
          },
          (n) => progress.add(n),
        );
      });
      progress.finish();
    }
  }
  const s = state as TransferState | null;
  if (s === null) throw new Error("no archive to transfer");

  // 2. Into the target: uploaded to the cloud (push, resumed from what it has) or imported here.
  const layout = await layoutOfFile(archive);
  const imported = await withRetries("upload", async () => {
    const offset = direction === "push" ? ((await sink.importStatus(o.target, s.sha256)).upload?.received ?? 0) : 0;
    const from = offset <= s.size ? offset : 0;
    if (direction === "push" && from > 0 && resumedFrom === 0) resumedFrom = from;
    progress.phase(s.size, from, layout);
    return sink.importFrom(o.target, { file: archive, sha256: s.sha256, offset: from, replace: o.replace }, (n) =>
      progress.add(n),
    );
  }).catch((err: unknown) => {
    // Refused as damaged or corrupt: this archive cannot be resumed; the next run starts over.
    if (err instanceof TransferError && err.code === "invalid_request") discard();
    throw err;
  });
  progress.finish();
  discard();
  return { imported, bytes: s.size, resumedFrom, ms: Date.now() - started };
}

function readState(statePath: string, archive: string, recipient: string): TransferState | null {
  try {
    const state = JSON.parse(readFileSync(statePath, "utf8")) as TransferState;
    const fresh = state.expires_at === undefined || state.expires_at > Date.now() + 60_000;
    if (state.recipient === recipient && fresh && statSync(archive, { throwIfNoEntry: false }) !== undefined)
      return state;
  } catch {
    // no state, or an unreadable one: start over
  }
  rmSync(statePath, { force: true });
  rmSync(archive, { force: true });
  return null;
}

function writeState(path: string, state: TransferState): void {
  writeFileSync(path, JSON.stringify(state), { mode: 0o600 });
}

function report(
  direction: Direction,
  r: RunResult & { source: string; sink: string; group: string; target: string },
  json: boolean,
): void {
  const rate = mbPerSecond(r.bytes, r.ms);
  const primitives = r.imported.imported.map((p) => ({
    id: p.id,
    name: p.name,
    type: p.type,
    source_id: p.source_id,
    replaced: p.replaced,
  }));
  if (json) {
    console.log(
      JSON.stringify({
        direction,
        from: { side: r.source, group: r.group },
        to: { side: r.sink, group: r.target },
        bytes: r.bytes,
        sha256: r.imported.sha256,
        resumed_from: r.resumedFrom,
        seconds: r.ms / 1000,
        mb_per_s: Number(rate.toFixed(1)),
        primitives,
      }),
    );
    return;
  }
  const verb = direction === "push" ? "pushed" : "pulled";
  const resumed = r.resumedFrom > 0 ? `, resumed at ${mib(r.resumedFrom)}` : "";
  console.log(
    `${verb} group '${r.group}' from ${r.source} to '${r.target}' on ${r.sink}: ${primitives.length} primitive(s), ${mib(r.bytes)} in ${(r.ms / 1000).toFixed(1)} s (${rate.toFixed(1)} MB/s${resumed})`,
  );
  for (const p of primitives) {
    const how = p.replaced === null ? "new" : `replaced; what it held is snapshot ${p.replaced.snapshot}`;
    console.log(`  ${p.type.padEnd(8)} ${p.name.padEnd(24)} ${p.id}  (${how})`);
  }
  const replaced = primitives.filter((p) => p.replaced !== null);
  if (replaced.length > 0) {
    console.log(
      `to undo a replacement: POST /v1/primitives/<id>/restore with {"snapshot":"<snapshot id>"} on ${r.sink}`,
    );
  }
}
