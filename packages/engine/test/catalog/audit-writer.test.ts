import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditWriter, SqliteAudit } from "../../src/catalog/sqlite-audit.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function auditFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-audit-"));
  dirs.push(dir);
  return join(dir, "audit.sqlite");
}

const entry = (n: number) => ({
  id: `aud_${n}`,
  ts: 1_700_000_000_000 + n,
  group: "g",
  primitive: "kv" as const,
  primitive_id: "prm_1",
  instance: "cache",
  actor: "local",
  action: "kv.set",
  target: `k${n}`,
  detail: n % 2 === 0 ? null : { n },
});

describe("audit writer thread", () => {
  it("runs as a module of its own and stores what two files append, each in its own file", async () => {
    const writer = new AuditWriter();
    const a = new SqliteAudit(auditFile(), writer);
    const b = new SqliteAudit(auditFile(), writer);
    await a.append([entry(1), entry(2)]);
    await b.append([entry(3)]);
    expect(a.list({ limit: 10 }).map((e) => e.target)).toEqual(["k2", "k1"]);
    expect(a.list({ limit: 10 })[1]?.detail).toEqual({ n: 1 });
    expect(b.list({ limit: 10 }).map((e) => e.target)).toEqual(["k3"]);
    expect(await a.prune(1_700_000_000_002)).toBe(1);
    await a.close();
    await b.close();
    await writer.stop();
  });

  it("fails at once, instead of waiting forever, once its thread has stopped", async () => {
    const writer = new AuditWriter();
    const audit = new SqliteAudit(auditFile(), writer);
    await audit.append([entry(1)]);
    await writer.stop();
    await expect(audit.append([entry(2)])).rejects.toThrow(/exited/);
    await audit.close();
  });
});
