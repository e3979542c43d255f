// Security probe, issue 35 items 1 to 3, replayed against a running cloud (probe-cloud.ts: two
// api cells as child processes, limits on, durable, s3rver): an attacker holds workspace A's
// account key; B is another tenant on the same cell.
//  1. Transfer keys: B's archive must not open in A (one transfer key for every workspace let A
//     import it and re-export it to a key of its own); each workspace has its own key, kept when
//     the workspace moves to another cell.
//  2. Imported SQLite files: a kv file carrying a trigger (WITH RECURSIVE) is refused at import,
//     naming the entry, before anything is adopted; so is a file that is not SQLite or is cut.
//  3. `?recipient=`: an account key's export to a key of its choosing carries vault names
//     without values until the owner allows secret export; then values, and an audit entry
//     naming the recipient's key fingerprint.
import { createHash, randomBytes } from "node:crypto";
import { moveWorkspace } from "@prim/cells";
import { call } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readApiEnv } from "../src/index.js";
import {
  attackerKey,
  entryOf,
  exportGroup,
  importGroup,
  onSqliteFile,
  readArchive,
  recoverSecrets,
  withEntry,
} from "./probe-archive.js";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";
import { allowSecretExport } from "./probe-secrets.js";

const B_SECRET = `b-secret-${randomBytes(12).toString("hex")}`;

let cloud: ProbeCloud;
let a: ProbeWorkspace;
let b: ProbeWorkspace;
/** B's group `app` exported by B (sealed for B). */
let bArchive: Buffer;

const url = (ws: ProbeWorkspace) => cloud.cell(ws.cell).url;
const recipientOf = async (ws: ProbeWorkspace) =>
  (await ok(url(ws), ws.key, "GET", "/v1/groups/app/import")).recipient as string;

beforeAll(async () => {
  cloud = await startProbeCloud("probe_archives");
  a = await cloud.workspace("attacker", "enterprise", { on: "cell-a" });
  b = await cloud.workspace("victim", "enterprise", { on: "cell-a" });
  for (const ws of [a, b]) {
    await ok(url(ws), ws.key, "POST", "/v1/groups", { name: "app" });
    const kv = await ok(url(ws), ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    await ok(url(ws), ws.key, "PUT", `/v1/primitives/${kv.id}/keys/k`, { value: "v" });
    // Each owner may let values leave (item 3): the attacker owns A, and B's owner exports on purpose.
    await allowSecretExport(cloud, ws);
  }
  const vault = await ok(url(b), b.key, "POST", "/v1/primitives", { name: "secrets", type: "vault", group: "app" });
  await ok(url(b), b.key, "PUT", `/v1/primitives/${vault.id}/secrets/TOKEN`, { value: B_SECRET });
  const exported = await exportGroup(url(b), b.key, "app");
  expect(exported.error).toBeNull();
  bArchive = exported.bytes;
}, 180_000);
afterAll(() => cloud?.stop(), 30_000);

describe("item 1: a transfer key per workspace", () => {
  it("gives two workspaces on one cell different transfer keys", async () => {
    expect(a.cell).toBe(b.cell);
    const [ra, rb] = [await recipientOf(a), await recipientOf(b)];
    expect(ra).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rb).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ra).not.toBe(rb);
  });

  it("refuses B's sealed archive in A, so A cannot re-export B's secret to a key of its own", async () => {
    const mine = attackerKey();
    const imported = await importGroup(url(a), a.key, "loot", bArchive);
    let stolen: string[] = [];
    if (imported.status === 201) {
      const again = await exportGroup(url(a), a.key, "loot", mine.publicKey);
      if (again.error === null) stolen = [...(await recoverSecrets(again.bytes, mine)).values.values()];
    }
    expect({ status: imported.status, code: imported.body?.error?.code, stolen }).toEqual({
      status: 400,
      code: "invalid_request",
      stolen: [],
    });
    // The archive itself opens for nobody but B: not for the attacker's key either.
    expect((await recoverSecrets(bArchive, mine)).values.size).toBe(0);

    // The rightful owner: B imports its own archive and gets its secret back.
    const restored = await importGroup(url(b), b.key, "restored", bArchive);
    expect(restored.status, JSON.stringify(restored.body)).toBe(201);
    const own = attackerKey(); // a key of B's own: B may send its values where it likes
    const out = await exportGroup(url(b), b.key, "restored", own.publicKey);
    expect(out.error).toBeNull();
    expect((await recoverSecrets(out.bytes, own)).values.get("TOKEN")).toBe(B_SECRET);
  });

  it("keeps a moved workspace's key: B's archive still opens in B on its new cell, and only there", async () => {
    const before = await recipientOf(b);
    const operator = readApiEnv({ ...cloud.env, PRIM_DATA_DIR: "/nonexistent" });
    const report = await moveWorkspace(operator, b.id, "cell-b");
    expect(report).toMatchObject({ moved: true, from: "cell-a", to: "cell-b" });
    b = { ...b, cell: "cell-b" };
    expect(await recipientOf(b)).toBe(before);
    expect(await recipientOf(a)).not.toBe(before);
    const imported = await importGroup(url(b), b.key, "after-move", bArchive);
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    // Through the other cell (forwarded) it is the same workspace, the same key.
    expect((await ok(cloud.cell("cell-a").url, b.key, "GET", "/v1/groups/app/import")).recipient).toBe(before);
  }, 60_000);
});

/** A trigger that writes three keys on any insert into kv, through a recursive CTE. */
const TRIGGER = `CREATE TRIGGER probe_payload AFTER INSERT ON kv WHEN NEW.key NOT LIKE 'probe-trigger-%' BEGIN
  INSERT OR IGNORE INTO kv (key, value, encoding, version, created_at, updated_at)
    SELECT 'probe-trigger-' || i, '"ran"', 'json', 1, 0, 0
      FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 3) SELECT i FROM n);
END`;

describe("item 2: imported SQLite files never run their own code", () => {
  let own: Buffer;
  let kvEntry: string;
  let kvBytes: Buffer;

  beforeAll(async () => {
    own = (await exportGroup(url(a), a.key, "app")).bytes;
    kvEntry = await entryOf(own, "kv");
    kvBytes = (await readArchive(own)).find((e) => e.name === kvEntry)?.bytes as Buffer;
  });

  /** What A's import of `archive` into `group` did: its answer, and what the group holds after. */
  async function attempt(group: string, archive: Buffer) {
    const res = await importGroup(url(a), a.key, group, archive);
    const listed = await call(url(a), a.key, "GET", `/v1/primitives?group=${group}`);
    const adopted = listed.status === 200 ? listed.body.data : [];
    let triggerRan = false;
    if (res.status === 201) {
      // Today's failure, made visible: a write to the adopted kv runs the file's trigger.
      const kv = adopted.find((p: { type: string }) => p.type === "kv");
      await call(url(a), a.key, "PUT", `/v1/primitives/${kv.id}/keys/next`, { value: 1 });
      triggerRan = (await call(url(a), a.key, "GET", `/v1/primitives/${kv.id}/keys/probe-trigger-1`)).status === 200;
    }
    return {
      status: res.status,
      code: res.body?.error?.code,
      namesEntry: String(res.body?.error?.message).includes(kvEntry),
      adopted: adopted.map((p: { name: string }) => p.name),
      triggerRan,
    };
  }

  it("refuses a kv file carrying a trigger with 400 naming the entry; nothing adopted, nothing ran", async () => {
    const { bytes: hostile } = await onSqliteFile(kvBytes, (db) => db.exec(TRIGGER));
    const refused = await attempt("tampered", await withEntry(own, kvEntry, hostile));
    expect(refused).toEqual({ status: 400, code: "invalid_request", namesEntry: true, adopted: [], triggerRan: false });
    // Another tenant's kv answers (nothing of A's import runs on its cell).
    const [bKv] = (await ok(url(b), b.key, "GET", "/v1/primitives?group=app&type=kv")).data;
    expect((await call(url(b), b.key, "GET", `/v1/primitives/${bKv.id}/keys/k`)).body.value).toBe("v");

    // The same archive, untouched, imports and serves.
    expect((await importGroup(url(a), a.key, "clean", own)).status).toBe(201);
    const [kv] = (await ok(url(a), a.key, "GET", "/v1/primitives?group=clean&type=kv")).data;
    expect((await call(url(a), a.key, "GET", `/v1/primitives/${kv.id}/keys/k`)).body.value).toBe("v");
  }, 60_000);

  it("refuses a kv entry that is not SQLite, or is cut short, with 400 at import", async () => {
    const cases = { garbage: Buffer.from("not a database, just bytes".repeat(200)), cut: kvBytes.subarray(0, 4096) };
    for (const [name, bytes] of Object.entries(cases)) {
      const refused = await attempt(`broken-${name}`, await withEntry(own, kvEntry, bytes));
      expect({ name, ...refused, triggerRan: false }).toEqual({
        name,
        status: 400,
        code: "invalid_request",
        namesEntry: true,
        adopted: [],
        triggerRan: false,
      });
    }
  }, 60_000);
});

describe("item 3: vault values leave for another key only when the owner allows it", () => {
  it("exports names without values while secret export is off; values and an audited fingerprint once on", async () => {
    const c = await cloud.workspace("holder", "enterprise"); // secret export off: the default
    const C_SECRET = `c-secret-${randomBytes(12).toString("hex")}`;
    await ok(url(c), c.key, "POST", "/v1/groups", { name: "app" });
    const vault = await ok(url(c), c.key, "POST", "/v1/primitives", { name: "secrets", type: "vault", group: "app" });
    const v = `/v1/primitives/${vault.id}`;
    await ok(url(c), c.key, "PUT", `${v}/secrets/TOKEN`, { value: C_SECRET });
    await ok(url(c), c.key, "POST", `${v}/grants`, { name: "TOKEN", allow: { hosts: ["example.com"] } });
    const thief = attackerKey();

    const off = await exportGroup(url(c), c.key, "app", thief.publicKey);
    expect(off.error).toBeNull();
    const taken = await recoverSecrets(off.bytes, thief);
    expect({ names: taken.names, values: [...taken.values.values()] }).toEqual({ names: ["TOKEN"], values: [] });
    // Imported, such a vault knows its secret but has no value for it: a clear error on use.
    expect((await importGroup(url(c), c.key, "copy", off.bytes)).status).toBe(201);
    const [copy] = (await ok(url(c), c.key, "GET", "/v1/primitives?group=copy&type=vault")).data;
    const used = await call(url(c), c.key, "POST", `/v1/primitives/${copy.id}/fetch`, {
      url: "https://example.com/",
      auth: { bearer: "TOKEN" },
    });
    expect([used.status, used.body?.error?.code]).toEqual([409, "conflict"]);

    // The owner allows it: the same export now carries the value, and the audit names the key.
    await allowSecretExport(cloud, c);
    const on = await exportGroup(url(c), c.key, "app", thief.publicKey);
    expect(on.error).toBeNull();
    expect((await recoverSecrets(on.bytes, thief)).values.get("TOKEN")).toBe(C_SECRET);
    const trail = await ok(url(c), c.key, "GET", "/v1/audit?action=group.export");
    const fingerprint = createHash("sha256").update(Buffer.from(thief.publicKey, "base64url")).digest("hex");
    const named = trail.data.filter((e: unknown) => {
      const text = JSON.stringify(e);
      return text.includes(fingerprint.slice(0, 16)) || text.includes(thief.publicKey);
    });
    expect(named.length).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
