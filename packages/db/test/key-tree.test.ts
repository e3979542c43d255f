// The key tree under concurrency (issue 41, item 2): mints racing a revocation of an ancestor,
// and a workspace's closing, never leave a live key under a revoked one; every key revoked is
// published once; a workspace with a tree of keys is dropped whole.
import {
  closeWorkspace,
  createUser,
  createWorkspace,
  dropWorkspace,
  hashKey,
  migrate,
  mintKey,
  openPool,
  revokeKey,
} from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const db = freshDatabase("keytree");
let pool: pg.Pool;

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  pool = await openPool(db.url);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await db.drop();
});

/** Live keys of `workspace` with a revoked ancestor (should be none). */
async function liveUnderRevoked(workspace: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `WITH RECURSIVE up AS (
         SELECT k.id AS key_id, k.parent_id FROM api_keys k WHERE k.workspace_id = $1 AND k.revoked_at IS NULL
         UNION SELECT up.key_id, p.parent_id FROM up JOIN api_keys p ON p.id = up.parent_id)
     SELECT DISTINCT up.key_id AS id FROM up JOIN api_keys a ON a.id = up.parent_id WHERE a.revoked_at IS NOT NULL`,
    [workspace],
  );
  return rows.map((r) => r.id);
}

const settle = async <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: { code?: string }) => {
      // The only refusal a mint under a key being revoked may meet.
      expect(error.code).toBe("invalid_token");
      return { value: undefined };
    },
  );

describe("the key tree under concurrency", () => {
  it("mints racing a revocation of their ancestor: each child is refused or revoked with it, and published", async () => {
    for (let round = 0; round < 5; round++) {
      const made = await createWorkspace(pool, { name: `Race ${round}` });
      const ws = made.workspace.id;
      const a = await mintKey(pool, { parent: made.key_id, workspace: ws, name: "a" });
      const b = await mintKey(pool, { parent: a.id, workspace: ws, name: "b" });
      const published = new Set<string>();
      const results = await Promise.all([
        ...Array.from({ length: 8 }, () => settle(mintKey(pool, { parent: b.id, workspace: ws }))),
        ...Array.from({ length: 4 }, () => settle(mintKey(pool, { parent: a.id, workspace: ws }))),
        settle(revokeKey(pool, a.id, async (hash) => void published.add(hash))),
      ]);
      expect(await liveUnderRevoked(ws)).toEqual([]);
      const minted = results.flatMap((r) => (r.value !== undefined && "key" in r.value ? [r.value] : []));
      for (const key of [a, b, ...minted]) expect(published.has(hashKey(key.key))).toBe(true);
      const root = await pool.query("SELECT revoked_at FROM api_keys WHERE id = $1", [made.key_id]);
      expect(root.rows[0].revoked_at).toBeNull(); // the parent of the revoked key is untouched
    }
  });

  it("mints racing a workspace's closing leave no live key; the tree is dropped with the workspace", async () => {
    const owner = (await createUser(pool, { email: "owner@keytree.test", password: "correct horse 1" })).id;
    const made = await createWorkspace(pool, { name: "Closing", ownerId: owner });
    const ws = made.workspace.id;
    const a = await mintKey(pool, { parent: made.key_id, workspace: ws });
    await Promise.all([
      ...Array.from({ length: 8 }, () => settle(mintKey(pool, { parent: a.id, workspace: ws }))),
      closeWorkspace(pool, { workspace: ws, name: "Closing", user: owner }, async () => {}),
    ]);
    const live = await pool.query("SELECT id FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL", [ws]);
    expect(live.rows).toEqual([]);
    await dropWorkspace(pool, { workspace: ws, actor: `user:${owner}`, detail: {} });
    expect((await pool.query("SELECT 1 FROM api_keys WHERE workspace_id = $1", [ws])).rowCount).toBe(0);
  });
});
