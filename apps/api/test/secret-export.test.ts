// Item 3 of issue 35: `?recipient=` no longer hands vault values to anyone with an account key.
// In the cloud a group archive carries vault values for another key only when an owner switched
// "allow secret export" on (off by default; audited), only for an account key or an owner's
// session, and each such export's audit entry names the recipient's key fingerprint. Otherwise
// the archive carries names, versions and grants without values, and an import marks those
// secrets as needing a value (409 `conflict` on use) until a put sets one. The recipient is a
// local engine (what `prim pull` does), so the values are proven by injecting them for real.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createKey, createUser, createWorkspace, setSecretExport } from "@prim/db";
import { Engine, type FetchResult, type GroupArchive, LOCAL_PRINCIPAL, type Page, type Principal } from "@prim/engine";
import { manifestOf, tarEntries } from "@prim/testkit";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { RemoteInvoker } from "@prim/wire/invoke";
import Database from "better-sqlite3";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SECRET = randomBytes(24).toString("hex");
const TOKEN = "tok_live_0123456789abcdef";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

let cloud: TestCloud;
let pool: pg.Pool;
let invoker: RemoteInvoker;
let workspace: string;
let accountKey: string;
let owner: Principal;
let admin: Principal;
let local: Engine;
let localDir: string;
let recipient: string;
let vaultId: string;
const upstream = createServer((req, res) => {
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ authorization: sha256(req.headers.authorization ?? "") }));
});

const principal = (id: string, kind: Principal["kind"] = "account"): Principal => ({
  kind,
  workspace,
  actor: `user:${id}`,
  groupId: null,
  tools: null,
});

beforeAll(async () => {
  cloud = await startCloud("secretexport", { PRIM_INTERNAL_SECRET: SECRET });
  pool = cloud.api.hub.pool as pg.Pool;
  invoker = new RemoteInvoker({
    url: cloud.internalUrl,
    secret: SECRET,
  });
  const ownerUser = await createUser(pool, { email: "owner@acme.test", password: "password123" });
  const made = await createWorkspace(pool, { name: "Acme", plan: "pro", ownerId: ownerUser.id });
  workspace = made.workspace.id;
  accountKey = made.key;
  const adminUser = await createUser(pool, {
    email: "admin@acme.test",
    password: "password123",
    workspace,
    role: "admin",
  });
  owner = principal(ownerUser.id);
  // The dashboard acts for owners and admins alike as account-level principals (trpc/init.ts).
  admin = principal(adminUser.id);
  expect((await call(cloud.url, accountKey, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
  const vault = await call(cloud.url, accountKey, "POST", "/v1/primitives", {
    name: "secrets",
    type: "vault",
    group: "app",
  });
  vaultId = vault.body.id;
  expect(
    (await call(cloud.url, accountKey, "PUT", `/v1/primitives/${vaultId}/secrets/TOKEN`, { value: TOKEN })).status,
  ).toBe(200);
  const grant = { name: "TOKEN", allow: { hosts: ["127.0.0.1"], methods: ["GET"] } };
  expect((await call(cloud.url, accountKey, "POST", `/v1/primitives/${vaultId}/grants`, grant)).status).toBe(201);
  // The recipient: a local engine (prim dev's), which may reach the loopback upstream.
  localDir = mkdtempSync(join(tmpdir(), "prim-recipient-"));
  local = Engine.openLocal({ dataDir: localDir, allowLoopbackFetch: true });
  recipient = (await local.invoke<{ recipient: string }>(LOCAL_PRINCIPAL, "group.import_status", null, { group: "x" }))
    .recipient;
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
}, 60_000);

afterAll(async () => {
  upstream.closeAllConnections();
  upstream.close();
  await local?.close();
  if (localDir !== undefined) rmSync(localDir, { recursive: true, force: true });
  await cloud?.stop();
});

/** The recipient's key fingerprint as audited: sha256 of the raw X25519 key, first 16 hex. */
const fingerprint = (key: string) =>
  createHash("sha256").update(Buffer.from(key, "base64url")).digest("hex").slice(0, 16);

async function exportByKey(key: string, to: string | null): Promise<{ status: number; bytes: Buffer; body: any }> {
  const query = to === null ? "" : `?recipient=${to}`;
  const res = await fetch(`${cloud.url}/v1/groups/app/export${query}`, { headers: { authorization: `Bearer ${key}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes, body: res.ok ? null : JSON.parse(bytes.toString()) };
}

async function exportAs(who: Principal, to: string): Promise<Buffer> {
  const { archive } = await invoker.invoke<GroupArchive>(who, "group.export", "app", { recipient: to });
  return readFileSync(archive.path);
}

/** The archived vault's rows: which key seals each value, and how many bytes it has. */
function archivedSecrets(archive: Buffer): { name: string; version: number; key_id: string; bytes: number }[] {
  const manifest = manifestOf(archive);
  const entryName = manifest.primitives.find((p: { type: string }) => p.type === "vault").entry;
  const entry = tarEntries(archive).find((e) => e.name === entryName);
  if (entry === undefined) throw new Error("no vault entry");
  const path = join(localDir, `inspect-${randomBytes(4).toString("hex")}.sqlite`);
  writeFileSync(path, archive.subarray(entry.offset, entry.offset + entry.size));
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare("SELECT name, version, key_id, length(ciphertext) AS bytes FROM secrets ORDER BY name")
      .all() as never;
  } finally {
    db.close();
    rmSync(path, { force: true });
  }
}

let imports = 0;
/** Imports `archive` into a new group of the local engine; answers the new vault's id. */
async function importLocally(archive: Buffer): Promise<string> {
  const group = `pulled-${++imports}`;
  const result = await local.invoke<{ imported: { id: string; type: string }[] }>(
    LOCAL_PRINCIPAL,
    "group.import",
    null,
    {
      group,
      body: Readable.from([archive]),
      sha256: createHash("sha256").update(archive).digest("hex"),
    },
  );
  return result.imported.find((p) => p.type === "vault")?.id as string;
}

const useSecret = (vault: string) =>
  local.invoke<FetchResult>(LOCAL_PRINCIPAL, "vault.fetch", vault, {
    url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`,
    auth: { bearer: "TOKEN" },
  });

async function exportAudits(): Promise<{ actor: string; detail: Record<string, unknown> }[]> {
  const trail = await call(cloud.url, accountKey, "GET", "/v1/audit?action=group.export");
  expect(trail.status).toBe(200);
  return trail.body.data;
}

describe("secret export in the cloud", () => {
  it("is off by default: an account key's export for another key carries names, versions and grants, no values; the import marks them; a put clears the mark", async () => {
    const archive = await exportByKey(accountKey, recipient);
    expect(archive.status).toBe(200);
    expect(manifestOf(archive.bytes).vault).toBeNull();
    const rows = archivedSecrets(archive.bytes);
    expect(rows).toEqual([{ name: "TOKEN", version: 1, key_id: "none", bytes: 0 }]);
    const [latest] = await exportAudits();
    expect(latest?.detail).toMatchObject({ recipient: fingerprint(recipient), vault_values: false });

    const vault = await importLocally(archive.bytes);
    const listed = await local.invoke<Page<Record<string, unknown>>>(LOCAL_PRINCIPAL, "vault.list", vault, {});
    expect(listed.data).toEqual([
      expect.objectContaining({
        name: "TOKEN",
        version: 1,
        needs_value: true,
        grant: { hosts: ["127.0.0.1"], methods: ["GET"], expires_at: null },
      }),
    ]);
    // Never a silent empty secret: use is refused, naming what to do.
    await expect(useSecret(vault)).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining("has no value here"),
    });
    // The rightful fix on the same vault: a put gives it a value, and use injects it.
    await local.invoke(LOCAL_PRINCIPAL, "vault.put", vault, { name: "TOKEN", value: "tok_new_value_42" });
    const after = await local.invoke<Page<Record<string, unknown>>>(LOCAL_PRINCIPAL, "vault.list", vault, {});
    expect(after.data[0]).toMatchObject({ name: "TOKEN", version: 2, needs_value: false });
    const used = await useSecret(vault);
    expect(JSON.parse(used.body).authorization).toBe(sha256("Bearer tok_new_value_42"));
  });

  it("keeps values in an export for the workspace's own key (they open only in this workspace)", async () => {
    const archive = await exportByKey(accountKey, null);
    expect(archive.status).toBe(200);
    expect(manifestOf(archive.bytes).vault).not.toBeNull();
    expect(archivedSecrets(archive.bytes)).toEqual([
      { name: "TOKEN", version: 1, key_id: "archive", bytes: expect.any(Number) },
    ]);
    const sha = createHash("sha256").update(archive.bytes).digest("hex");
    const res = await fetch(`${cloud.url}/v1/groups/restored/import?sha256=${sha}`, {
      method: "POST",
      headers: { authorization: `Bearer ${accountKey}`, "content-type": "application/octet-stream" },
      body: archive.bytes,
    });
    expect(res.status).toBe(201);
    const imported = ((await res.json()) as { imported: { id: string; type: string }[] }).imported;
    const copy = imported.find((p) => p.type === "vault")?.id;
    const listed = await call(cloud.url, accountKey, "GET", `/v1/primitives/${copy}/secrets`);
    expect(listed.body.data[0]).toMatchObject({ name: "TOKEN", needs_value: false });
  });

  it("once an owner enables it (audited): an account key's and the owner's exports carry the values sealed for the recipient; an admin's session and a scoped key get none", async () => {
    // A scoped key (every tool of the group) is refused outright, before and after.
    const scoped = await createKey(pool, { workspace, group: "app" });
    const refused = await exportByKey(scoped.key, recipient);
    expect(refused).toMatchObject({ status: 403, body: { error: { code: "forbidden" } } });

    expect(await setSecretExport(pool, { workspace, enabled: true, actor: owner.actor })).toEqual({
      workspace: { id: workspace, name: "Acme", secret_export: true },
    });
    const toggles = await call(cloud.url, accountKey, "GET", "/v1/audit?type=workspace");
    expect(toggles.body.data[0]).toMatchObject({
      action: "secret_export.enable",
      actor: owner.actor,
      primitive: "workspace",
      primitive_id: null,
      target: workspace,
    });

    const byKey = await exportByKey(accountKey, recipient);
    expect(manifestOf(byKey.bytes).vault).toMatchObject({ recipient });
    expect(archivedSecrets(byKey.bytes)).toEqual([
      { name: "TOKEN", version: 1, key_id: "archive", bytes: expect.any(Number) },
    ]);
    const [audited] = await exportAudits();
    expect(audited).toMatchObject({
      actor: expect.stringMatching(/^key:/),
      detail: expect.objectContaining({ recipient: fingerprint(recipient), vault_values: true }),
    });
    const vault = await importLocally(byKey.bytes);
    expect(JSON.parse((await useSecret(vault)).body).authorization).toBe(sha256(`Bearer ${TOKEN}`));

    const byOwner = await exportAs(owner, recipient);
    expect(manifestOf(byOwner).vault).toMatchObject({ recipient });
    const [ownerAudit] = await exportAudits();
    expect(ownerAudit).toMatchObject({ actor: owner.actor, detail: expect.objectContaining({ vault_values: true }) });

    // An admin's dashboard session is account-level too, but only owners take values out.
    const byAdmin = await exportAs(admin, recipient);
    expect(manifestOf(byAdmin).vault).toBeNull();
    expect(archivedSecrets(byAdmin)[0]).toMatchObject({ key_id: "none", bytes: 0 });
    expect((await exportByKey(scoped.key, recipient)).status).toBe(403);

    // Switched off again (audited): the next export carries no values.
    await setSecretExport(pool, { workspace, enabled: false, actor: "admin" });
    const off = await call(cloud.url, accountKey, "GET", "/v1/audit?action=secret_export.");
    expect(off.body.data.map((e: { action: string }) => e.action)).toEqual([
      "secret_export.disable",
      "secret_export.enable",
    ]);
    expect(manifestOf((await exportByKey(accountKey, recipient)).bytes).vault).toBeNull();
  });
});
