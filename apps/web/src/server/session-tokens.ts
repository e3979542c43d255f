import { createHash } from "node:crypto";
import type { BetterAuthOptions, DBAdapter, DBTransactionAdapter, Where } from "better-auth";

/**
 * Session tokens kept as their sha256 (issue 35, item 15). better-auth 1.7 has no option for
 * it (its `verification.storeIdentifier: "hashed"` covers verification values only), so this
 * wraps the database adapter: for the `session` model a new row stores the hash while the
 * library (and so the cookie) gets the token; every lookup by token looks up its hash, and the
 * row found carries the token it was asked with. A database copy then holds nothing that opens a
 * session, even with the signing secret.
 *
 * Rows read without their token (a user's session list) carry `hashed:<hash>`: such a value
 * deletes its row (the library revokes sessions it listed that way) but is hashed again by any
 * other lookup, so it never opens a session. The routes that hand listed tokens to a browser or
 * take them back (list/revoke sessions) are disabled in auth.ts: the dashboard has none.
 */
export const hashSessionToken = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

const LISTED = "hashed:";
const SESSION = "session";

type Row = Record<string, unknown> & { token?: unknown };

/** A `where` with each token value hashed (`listedPasses`: a listed row's `hashed:` value is taken as is). */
function hashWhere(where: Where[] | undefined, listedPasses: boolean): Where[] | undefined {
  const one = (value: unknown) =>
    typeof value !== "string"
      ? value
      : listedPasses && value.startsWith(LISTED)
        ? value.slice(LISTED.length)
        : hashSessionToken(value);
  return where?.map((w) =>
    w.field !== "token"
      ? w
      : { ...w, value: (Array.isArray(w.value) ? w.value.map(one) : one(w.value)) as Where["value"] },
  );
}

/** The token values a `where` asked for, by their hash. */
function asked(where: Where[] | undefined): Map<string, string> {
  const byHash = new Map<string, string>();
  for (const w of where ?? []) {
    if (w.field !== "token") continue;
    for (const value of Array.isArray(w.value) ? w.value : [w.value]) {
      if (typeof value === "string" && !value.startsWith(LISTED)) byHash.set(hashSessionToken(value), value);
    }
  }
  return byHash;
}

/** A stored row as the library sees it: the asked token back, else the listed form. */
function reveal<T>(row: T, byHash: Map<string, string>): T {
  if (row === null || typeof row !== "object" || typeof (row as Row).token !== "string") return row;
  const stored = (row as Row).token as string;
  return { ...row, token: byHash.get(stored) ?? `${LISTED}${stored}` };
}

function wrap<A extends DBTransactionAdapter>(inner: A): A {
  const isSession = (model: string) => model === SESSION;
  return {
    ...inner,
    create: async (data) => {
      if (!isSession(data.model) || typeof (data.data as Row).token !== "string") return inner.create(data);
      const token = (data.data as Row).token as string;
      const row = await inner.create({ ...data, data: { ...data.data, token: hashSessionToken(token) } });
      return reveal(row, new Map([[hashSessionToken(token), token]]));
    },
    findOne: async (data) => {
      if (!isSession(data.model)) return inner.findOne(data);
      return reveal(
        await inner.findOne({ ...data, where: hashWhere(data.where, false) as Where[] }),
        asked(data.where),
      );
    },
    findMany: async (data) => {
      if (!isSession(data.model)) return inner.findMany(data);
      const byHash = asked(data.where);
      return (await inner.findMany({ ...data, where: hashWhere(data.where, false) })).map((r) => reveal(r, byHash));
    },
    count: (data) => inner.count(isSession(data.model) ? { ...data, where: hashWhere(data.where, false) } : data),
    update: async (data) => {
      if (!isSession(data.model)) return inner.update(data);
      return reveal(await inner.update({ ...data, where: hashWhere(data.where, false) as Where[] }), asked(data.where));
    },
    updateMany: (data) =>
      inner.updateMany(isSession(data.model) ? { ...data, where: hashWhere(data.where, false) as Where[] } : data),
    delete: (data) =>
      inner.delete(isSession(data.model) ? { ...data, where: hashWhere(data.where, true) as Where[] } : data),
    deleteMany: (data) =>
      inner.deleteMany(isSession(data.model) ? { ...data, where: hashWhere(data.where, true) as Where[] } : data),
    consumeOne: async (data) => {
      if (!isSession(data.model)) return inner.consumeOne(data);
      return reveal(
        await inner.consumeOne({ ...data, where: hashWhere(data.where, true) as Where[] }),
        asked(data.where),
      );
    },
    incrementOne: async (data) => {
      if (!isSession(data.model)) return inner.incrementOne(data);
      return reveal(
        await inner.incrementOne({ ...data, where: hashWhere(data.where, false) as Where[] }),
        asked(data.where),
      );
    },
  };
}

/** The adapter factory `database` takes, with session tokens stored hashed (transactions included). */
export function withHashedSessionTokens(
  factory: (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions>,
): (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions> {
  return (options) => {
    const inner = factory(options);
    return {
      ...wrap(inner),
      transaction: (callback) => inner.transaction((trx) => callback(wrap(trx))),
    } as DBAdapter<BetterAuthOptions>;
  };
}
