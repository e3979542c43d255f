// The engine's durable-write counters, read from a bench server child (kv-server.ts answers
// `syncs`): how many fsync rounds ran and how many calls were answered after one.

export interface Syncs {
  fsyncs: number;
  writes: number;
}

interface SyncsChild {
  send(message: { type: "syncs" }): void;
  next(type: "syncs"): Promise<Syncs & { type: "syncs" }>;
}

export async function childSyncs(child: SyncsChild): Promise<Syncs> {
  child.send({ type: "syncs" });
  const { fsyncs, writes } = await child.next("syncs");
  return { fsyncs, writes };
}

/** What happened between two readings. */
export function syncsBetween(before: Syncs, after: Syncs): Syncs {
  return { fsyncs: after.fsyncs - before.fsyncs, writes: after.writes - before.writes };
}

/** Prints `RESULT <prefix>_fsyncs_per_sec` and `<prefix>_writes_per_fsync` for `seconds` of load. */
export function printSyncs(prefix: string, syncs: Syncs, seconds: number): void {
  console.log(`RESULT ${prefix}_fsyncs_per_sec ${(syncs.fsyncs / seconds).toFixed(0)} fsyncs/s`);
  const perFsync = syncs.fsyncs > 0 ? syncs.writes / syncs.fsyncs : 0;
  console.log(`RESULT ${prefix}_writes_per_fsync ${perFsync.toFixed(1)} writes/fsync`);
}

export function addSyncs(a: Syncs, b: Syncs): Syncs {
  return { fsyncs: a.fsyncs + b.fsyncs, writes: a.writes + b.writes };
}
