import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { PrimitiveInfo } from "@prim/engine";
import type { TestServer } from "@prim/testkit/rest";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { leaksIn, SECRET, withGrantedSecret, withVault } from "./vault-helpers.js";

interface Row {
  name: string;
  version: number;
  key_id: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

/** The vault's rows, read through the engine's own connection to the file. */
function rows(server: TestServer, vault: PrimitiveInfo): Row[] {
  const db = server.engine.services.files.handle(vault.id, "vault").db as Database.Database;
  return db.prepare("SELECT name, version, key_id, iv, tag, ciphertext FROM secrets ORDER BY name").all() as Row[];
}

describe("vault: at rest", () => {
  it("stores only ciphertext: the primitive's file never holds the value", async () => {
    const server = await withVault();
    await server.put("API_KEY", SECRET);
    await server.put("API_KEY", SECRET); // version 2
    const [row] = rows(server, server.vault);
    expect(row).toMatchObject({ name: "API_KEY", version: 2 });
    expect(row?.iv).toHaveLength(12);
    expect(row?.tag).toHaveLength(16);
    expect(row?.ciphertext).toHaveLength(Buffer.byteLength(SECRET));
    expect(row?.ciphertext.equals(Buffer.from(SECRET))).toBe(false);
    await server.close();
    const path = join(server.dataDir, "primitives", `${server.vault.id}.sqlite`);
    const db = new Database(path, { readonly: true });
    const columns = db.prepare("SELECT name FROM pragma_table_info('secrets')").pluck().all();
    expect(columns).toEqual(["name", "version", "key_id", "iv", "tag", "ciphertext", "created_at", "updated_at"]);
    db.close();
    for (const file of [path, `${path}-wal`]) {
      try {
        expect(leaksIn(readFileSync(file)), file).toEqual([]);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
  });

  it("makes master.key with mode 0600 and 32 bytes; group keys in keys.sqlite are wrapped", async () => {
    // A data directory of its own: on the file's shared host the key ring is the cell's.
    const server = await withVault({ dedicated: true });
    await server.put("API_KEY", SECRET);
    const group = (await server.api("GET", "/v1/groups/app")).body;
    const master = join(server.dataDir, "master.key");
    expect(statSync(master).mode & 0o777).toBe(0o600);
    expect(readFileSync(master)).toHaveLength(32);
    await server.close();
    const keys = new Database(join(server.dataDir, "keys.sqlite"), { readonly: true });
    const all = keys.prepare("SELECT id, group_id, wrapped FROM group_keys").all() as {
      id: string;
      group_id: string;
      wrapped: Buffer;
    }[];
    keys.close();
    expect(all).toHaveLength(1);
    expect(all[0]?.id).toMatch(/^dk_/);
    expect(all[0]?.group_id).toBe(group.id);
    expect(all[0]?.wrapped).toHaveLength(32);
    expect(leaksIn(readFileSync(join(server.dataDir, "keys.sqlite")))).toEqual([]);
  });

  it("binds each ciphertext to its secret: swapped rows fail to decrypt instead of leaking", async () => {
    const server = await withGrantedSecret();
    await server.put("OTHER", "another-value-entirely");
    await server.grant({ name: "OTHER", allow: { hosts: [server.echo.host] } });
    const db = server.engine.services.files.handle(server.vault.id, "vault").db as Database.Database;
    // Give OTHER the ciphertext of API_KEY (same version, same key): only the context differs.
    db.prepare(
      `UPDATE secrets SET iv = (SELECT iv FROM secrets WHERE name = 'API_KEY'),
        tag = (SELECT tag FROM secrets WHERE name = 'API_KEY'),
        ciphertext = (SELECT ciphertext FROM secrets WHERE name = 'API_KEY') WHERE name = 'OTHER'`,
    ).run();
    const res = await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "OTHER" } });
    expect(res.status).toBe(500);
    expect(res.body.error).toEqual({ code: "internal_error", message: "secret 'OTHER' could not be decrypted" });
    expect(server.echo.received).toEqual([]);
    // The bad row does not lock the vault: it moves, the good secret works, the bad one can go.
    await server.api("POST", "/v1/groups", { name: "other" });
    expect((await server.api("PATCH", `/v1/primitives/${server.vault.id}`, { group: "other" })).status).toBe(200);
    expect((await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "API_KEY" } })).status).toBe(200);
    expect((await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "OTHER" } })).status).toBe(500);
    expect((await server.api("DELETE", `${server.base}/secrets/OTHER`)).status).toBe(204);
  });

  it("keeps secrets and grants across a restart", async () => {
    const first = await withGrantedSecret();
    const { dataDir, vault, clock } = first;
    await first.close();
    const second = await withVault({ dataDir, vault, clock });
    const list = await second.api("GET", `${second.base}/secrets`);
    expect(list.body.data).toMatchObject([{ name: "API_KEY", version: 1, grant: { hosts: ["127.0.0.1"] } }]);
    const res = await second.fetch({ url: `${second.echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    expect(second.echo.received[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });
});

describe("vault: moving and forking", () => {
  it("re-encrypts every value under the new group's key when moved, and keeps them usable", async () => {
    const server = await withGrantedSecret();
    await server.put("SECOND", "second-value-1234");
    await server.api("POST", "/v1/groups", { name: "other" });
    const before = rows(server, server.vault);
    const moved = await server.api("PATCH", `/v1/primitives/${server.vault.id}`, { group: "other" });
    expect(moved.status).toBe(200);
    expect(moved.body.group).toBe("other");
    const after = rows(server, server.vault);
    expect(after.map((r) => r.name)).toEqual(["API_KEY", "SECOND"]);
    for (const [i, row] of after.entries()) {
      expect(row.key_id).not.toBe(before[i]?.key_id);
      expect(row.ciphertext.equals(before[i]?.ciphertext as Buffer)).toBe(false);
      expect(row.iv.equals(before[i]?.iv as Buffer)).toBe(false);
    }
    const res = await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    expect(server.echo.received[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    // Moving back uses the first group's key again.
    await server.api("PATCH", `/v1/primitives/${server.vault.id}`, { group: "app" });
    expect(rows(server, server.vault)[0]?.key_id).toBe(before[0]?.key_id);
  });

  it("re-encrypts a fork into another group under that group's key", async () => {
    const server = await withGrantedSecret();
    await server.api("POST", "/v1/groups", { name: "other" });
    const fork = await server.api("POST", `/v1/primitives/${server.vault.id}/fork`, { group: "other" });
    expect(fork.status).toBe(201);
    const sourceRow = rows(server, server.vault)[0] as Row;
    const forkRow = rows(server, fork.body)[0] as Row;
    expect(forkRow.key_id).not.toBe(sourceRow.key_id);
    expect(forkRow.ciphertext.equals(sourceRow.ciphertext)).toBe(false);
    const res = await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    const viaFork = await server.api("POST", `/v1/primitives/${fork.body.id}/fetch`, {
      url: `${server.echo.origin}/echo`,
      auth: { bearer: "API_KEY" },
    });
    expect(viaFork.status).toBe(200);
    expect(server.echo.received.map((r) => r.headers.authorization)).toEqual([`Bearer ${SECRET}`, `Bearer ${SECRET}`]);
    // The source is unchanged and still bound to its own id.
    expect(rows(server, server.vault)[0]?.ciphertext.equals(sourceRow.ciphertext)).toBe(true);
  });

  it("restores a snapshot taken in another group and re-seals it for the current one", async () => {
    const server = await withGrantedSecret();
    const snap = await server.api("POST", `/v1/primitives/${server.vault.id}/snapshots`, { name: "before-move" });
    expect(snap.status).toBe(201);
    await server.api("POST", "/v1/groups", { name: "other" });
    await server.api("PATCH", `/v1/primitives/${server.vault.id}`, { group: "other" });
    const movedKey = rows(server, server.vault)[0]?.key_id;
    expect(
      (await server.api("POST", `/v1/primitives/${server.vault.id}/restore`, { snapshot: "before-move" })).status,
    ).toBe(200);
    const res = await server.fetch({ url: `${server.echo.origin}/echo`, auth: { bearer: "API_KEY" } });
    expect(res.status).toBe(200);
    expect(server.echo.received[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(rows(server, server.vault)[0]?.key_id).toBe(movedKey);
  });
});
