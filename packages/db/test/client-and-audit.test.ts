import { freshDatabase, withClient } from "@prim/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient, migrate } from "../src/index.js";

const db = freshDatabase("client");
const DAY = 86_400_000;
beforeAll(() => migrate({ databaseUrl: db.url }));
afterAll(() => db.drop());

describe("the Prisma client over the migrated database", () => {
  it("writes and reads the control plane through the pg driver adapter", async () => {
    const prisma = createPrismaClient(db.url);
    try {
      await prisma.workspace.create({ data: { id: "ws_a", name: "Acme", plan: "pro" } });
      await prisma.apiKey.create({
        data: {
          id: "key_1",
          hash: "h".repeat(64),
          start: "pk_abcde",
          workspaceId: "ws_a",
          tools: ["db_query", "fs_*"],
        },
      });
      const key = await prisma.apiKey.findUnique({ where: { hash: "h".repeat(64) }, include: { workspace: true } });
      expect(key).toMatchObject({ id: "key_1", tools: ["db_query", "fs_*"], groupId: null, revokedAt: null });
      expect(key?.workspace.plan).toBe("pro");
    } finally {
      await prisma.$disconnect();
    }
  });
});

describe("audit partitions", () => {
  it("are made a day at a time ahead of now and dropped after 30 days", async () => {
    await withClient(db.url, async (c) => {
      const now = Date.UTC(2026, 10, 24, 12);
      const today = Math.floor(now / DAY);
      const parts = async () =>
        (
          await c.query<{ relname: string }>(
            `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'audit' ORDER BY 1`,
          )
        ).rows.map((r) => r.relname);
      await c.query("SELECT prim_audit_partitions($1)", [now - 40 * DAY]);
      expect(await parts()).toContain(`audit_d${today - 40}`);
      // A month and more later, those days are dropped and today's and the next two are made.
      expect((await c.query("SELECT prim_audit_partitions($1) AS n", [now])).rows[0].n).toBe(3);
      const insert = (ts: number) =>
        c.query(
          `INSERT INTO audit (ts, id, workspace_id, group_name, primitive, actor, action) VALUES ($1, 'aud_x', 'ws_a', 'g', 'kv', 'local', 'kv.set')`,
          [ts],
        );
      await insert(now);
      await insert(now + DAY);
      // Nothing is stored where no partition was made (beyond the days ahead).
      await expect(insert(now + 10 * DAY)).rejects.toThrow(/no partition/);
      expect(await parts()).toEqual([`audit_d${today}`, `audit_d${today + 1}`, `audit_d${today + 2}`]);
      expect((await c.query("SELECT count(*)::int AS n FROM audit")).rows[0].n).toBe(2);
    });
  });
});
