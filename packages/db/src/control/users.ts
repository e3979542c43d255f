import { randomBytes, randomUUID, scrypt, timingSafeEqual } from "node:crypto";
import { invalid, notFound, ServiceError } from "@prim/engine";
import type pg from "pg";
import { addMember, checkRole, type Role } from "./members.js";
import { auditedTransaction } from "./workspace-audit.js";

/**
 * The dashboard's password hash, in its auth library's format (better-auth: scrypt with
 * N=16384, r=16, p=1, 64-byte key over the NFKC password and a 16-byte hex salt; stored as
 * `<salt hex>:<key hex>`), so an account made here signs in there.
 */
const SCRYPT = { N: 16384, r: 16, p: 1, maxmem: 128 * 16384 * 16 * 2 };
const KEY_BYTES = 64;

function derive(password: string, salt: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, KEY_BYTES, SCRYPT, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16).toString("hex");
  return `${salt}:${(await derive(password, salt)).toString("hex")}`;
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  const [salt, key] = hash.split(":");
  if (salt === undefined || key === undefined || !/^[0-9a-f]+$/.test(key)) return false;
  const expected = Buffer.from(key, "hex");
  const actual = await derive(password, salt);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** The auth library's limits: 8 to 128 characters. */
const PASSWORD_LENGTH = { min: 8, max: 128 };
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface UserCreated {
  id: string;
  email: string;
  /** The membership made with the user, if a workspace was given. */
  workspace: string | null;
  role: Role | null;
}

/**
 * `prim admin user create`: an email-and-password account (for tests and operators), optionally
 * a member of a workspace with a role (`member` unless given; recorded as `member.add` by `admin`).
 */
export async function createUser(
  pool: pg.Pool,
  input: { email: string; password: string; name?: string; workspace?: string; role?: string },
): Promise<UserCreated> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw invalid("email: not an email address");
  const { length } = input.password;
  if (length < PASSWORD_LENGTH.min || length > PASSWORD_LENGTH.max) {
    throw invalid(`password: must be ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters`);
  }
  if (input.role !== undefined && input.workspace === undefined) throw invalid("--role needs --workspace");
  const role = checkRole(input.role ?? "member");
  const id = randomUUID().replaceAll("-", "");
  const hash = await hashPassword(input.password);
  await auditedTransaction(pool, async (client, record) => {
    if (input.workspace !== undefined) {
      const ws = await client.query("SELECT 1 FROM workspaces WHERE id = $1", [input.workspace]);
      if (ws.rowCount === 0) throw notFound(`workspace '${input.workspace}'`);
    }
    const user = await client.query(
      // An operator-made user's address counts as verified (CLOUD.md): it signs in at once.
      "INSERT INTO users (id, name, email, email_verified) VALUES ($1, $2, $3, true) ON CONFLICT (email) DO NOTHING",
      [id, input.name ?? email.split("@")[0], email],
    );
    if (user.rowCount === 0) throw new ServiceError("already_exists", `user '${email}' already exists`);
    await client.query(
      "INSERT INTO accounts (id, account_id, provider_id, user_id, password) VALUES ($1, $2, 'credential', $2, $3)",
      [randomUUID().replaceAll("-", ""), id, hash],
    );
    if (input.workspace !== undefined) {
      await addMember(client, record, { workspace: input.workspace, user: id, role, actor: "admin" });
    }
  });
  return { id, email, workspace: input.workspace ?? null, role: input.workspace === undefined ? null : role };
}
