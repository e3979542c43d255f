// Webhook endpoints for the procedure tests: made through the cell's internal route as the
// dashboard makes them (its secret sealed with the cell's master key), with one delivered
// delivery in its log (a row as the dispatcher leaves it) to read and redeliver. The URL is
// under `.invalid`: the cell's dispatcher never reaches anything with it.
import { randomBytes } from "node:crypto";
import type { Principal } from "@prim/wire";
import type pg from "pg";
import type { CellCalls } from "../src/server/cell";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const suffix = () => [...randomBytes(26)].map((b) => ALPHABET[b % 32]).join("");

export async function seedWebhook(
  pool: pg.Pool,
  cell: CellCalls,
  owner: Principal,
  group: string,
): Promise<{ id: string; delivery: string }> {
  const made = await cell.createWebhook(owner, { url: "https://hooks.invalid/prim", group });
  const delivery = `whd_${suffix()}`;
  await pool.query(
    `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, message_id, body, status, attempts, last_status,
            last_attempt_at, delivered_at)
     VALUES ($1, $2, $3, $4, '{}', 'delivered', 1, 200, now(), now())`,
    [delivery, made.id, owner.workspace, `seeded.1.${suffix()}`],
  );
  return { id: made.id, delivery };
}
