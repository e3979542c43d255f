import { migrate, openPool, registerCell, verifyPassword } from "@prim/db";
import { freshDatabase, runPrimCommand, withClient } from "@prim/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const db = freshDatabase("admin");
beforeAll(() => migrate({ databaseUrl: db.url }));
afterAll(() => db.drop());

async function admin(...args: string[]) {
  const res = await runPrimCommand(["admin", ...args, "--json"], { ...process.env, DATABASE_URL: db.url });
  return { ...res, out: res.code === 0 ? JSON.parse(res.stdout) : res.stdout };
}

// Each test runs the real command several times (a process start each): give them room under load.
describe("prim admin", { timeout: 60_000 }, () => {
  it("creates a workspace with a workspace key, scoped keys, changes the plan and revokes a key", async () => {
    const ws = await admin(
      "workspace",
      "create",
      "--name",
      "Acme",
      "--plan",
      "enterprise",
      "--rps",
      "100",
      "--burst",
      "300",
    );
    expect(ws).toMatchObject({ code: 0, stderr: "" });
    expect(ws.out).toEqual({
      workspace: { id: expect.stringMatching(/^ws_[0-9a-z]{26}$/), name: "Acme", plan: "enterprise" },
      key: expect.stringMatching(/^pk_[0-9a-z]{26}_[1-9A-HJ-NP-Za-km-z]{30,34}$/),
      key_id: expect.stringMatching(/^key_/),
    });
    const key = await admin(
      "key",
      "create",
      "--workspace",
      ws.out.workspace.id,
      "--tools",
      "db_query,fs_*",
      "--name",
      "ci",
    );
    expect(key.out).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^pk_/),
      group: null,
      tools: ["db_query", "fs_*"],
      read_only: false,
      expires_at: null,
      ip_allow: null,
      budget: null,
    });
    // --read-only: the key's principal is read-only (every writing call refused in engine.invoke).
    const reader = await admin("key", "create", "--workspace", ws.out.workspace.id, "--read-only");
    expect(reader.out).toMatchObject({ group: null, tools: null, read_only: true });
    const pool = await openPool(db.url);
    try {
      const { rows } = await pool.query("SELECT id, read_only FROM api_keys WHERE id = ANY($1) ORDER BY id", [
        [key.out.id, reader.out.id],
      ]);
      expect(rows).toEqual([
        { id: key.out.id, read_only: false },
        { id: reader.out.id, read_only: true },
      ]);
    } finally {
      await pool.end();
    }
    const plan = await admin("plan", "set", "--workspace", ws.out.workspace.id, "--plan", "pro");
    expect(plan.out.workspace).toMatchObject({ plan: "pro", rps: null, burst: null });
    const revoked = await admin("key", "revoke", "--id", key.out.id);
    expect(revoked.out).toMatchObject({ id: key.out.id, revoked_at: expect.any(Number) });
  });

  it("creates keys for agents: an expiry (--expires-in, --expires-at), an IP allowlist, a budget", async () => {
    const ws = await admin("workspace", "create", "--name", "Agents");
    const before = Date.now();
    const hour = await admin(
      "key",
      "create",
      "--workspace",
      ws.out.workspace.id,
      "--expires-in",
      "1h",
      "--ip-allow",
      "10.0.0.0/8,::1/128",
      "--budget",
      "1000/day",
    );
    expect(hour).toMatchObject({ code: 0, stderr: "" });
    expect(hour.out).toMatchObject({ ip_allow: ["10.0.0.0/8", "::1/128"], budget: { per: "day", limit: 1000 } });
    expect(hour.out.expires_at).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(hour.out.expires_at).toBeLessThanOrEqual(Date.now() + 3_600_000);
    const at = await admin(
      "key",
      "create",
      "--workspace",
      ws.out.workspace.id,
      "--expires-at",
      "2099-01-01T00:00:00Z",
      "--budget",
      "1000",
    );
    expect(at.out).toMatchObject({ expires_at: Date.UTC(2099, 0, 1), ip_allow: null, budget: { total: 1000 } });
    // Bad values: one line each, nothing made.
    for (const bad of [
      ["--expires-in", "1h", "--expires-at", "2099-01-01T00:00:00Z"],
      ["--expires-at", "2000-01-01T00:00:00Z"],
      ["--expires-at", "soon"],
      ["--ip-allow", "10.0.0.0/33"],
      ["--budget", "10/week"],
    ]) {
      const refused = await admin("key", "create", "--workspace", ws.out.workspace.id, ...bad);
      expect(refused.code, bad.join(" ")).not.toBe(0);
      expect(refused.stderr.trim().split("\n"), bad.join(" ")).toHaveLength(1);
    }
  });

  it("creates a user with a password the dashboard can check, as a member of a workspace", async () => {
    const ws = await admin("workspace", "create", "--name", "Gamma");
    const user = await admin(
      "user",
      "create",
      "--email",
      "Ada@Example.com",
      "--password",
      "correct horse",
      "--workspace",
      ws.out.workspace.id,
      "--role",
      "admin",
    );
    expect(user).toMatchObject({ code: 0, stderr: "" });
    expect(user.out).toEqual({
      id: expect.any(String),
      email: "ada@example.com",
      workspace: ws.out.workspace.id,
      role: "admin",
    });
    await withClient(db.url, async (client) => {
      const { rows } = await client.query(
        `SELECT a.password, a.provider_id, m.role FROM accounts a JOIN members m ON m.user_id = a.user_id
         WHERE a.user_id = $1`,
        [user.out.id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ provider_id: "credential", role: "admin" });
      // The stored form is the auth library's: `<16-byte salt hex>:<64-byte scrypt key hex>`.
      expect(rows[0].password).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
      expect(rows[0].password).not.toContain("correct horse");
      expect(await verifyPassword(rows[0].password, "correct horse")).toBe(true);
      expect(await verifyPassword(rows[0].password, "correct horsf")).toBe(false);
    });
    const again = await admin("user", "create", "--email", "ada@example.com", "--password", "another one");
    expect(again.stderr).toContain("user 'ada@example.com' already exists");
  });

  it("reports a workspace's usage this month from usage_daily and the live counter", async () => {
    const ws = await admin("workspace", "create", "--name", "Delta");
    const id = ws.out.workspace.id;
    const today = new Date().toISOString().slice(0, 10);
    await withClient(db.url, (client) =>
      client.query("INSERT INTO usage_daily (workspace_id, day, operations, storage_bytes) VALUES ($1, $2, 42, 1000)", [
        id,
        today,
      ]),
    );
    const usage = await admin("usage", "--workspace", id);
    expect(usage).toMatchObject({ code: 0, stderr: "" });
    expect(usage.out).toEqual({
      workspace: { id, name: "Delta", plan: "starter" },
      month: today.slice(0, 7),
      operations: 42,
      storage_bytes: 1000,
      days: [{ day: today, operations: 42, storage_bytes: 1000 }],
      primitives: 0,
      top_primitives: [],
    });
    expect((await admin("usage", "--workspace", "ws_nope")).stderr).toContain("workspace 'ws_nope' not found");
  });

  it("switches a workspace's secret export on and off, each switch in its audit trail as the operator", async () => {
    const ws = await admin("workspace", "create", "--name", "Epsilon", "--plan", "pro");
    const id = ws.out.workspace.id;
    const on = await admin("workspace", "secret-export", "--workspace", id, "--on");
    expect(on).toMatchObject({ code: 0, stderr: "" });
    expect(on.out).toEqual({ workspace: { id, name: "Epsilon", secret_export: true } });
    const off = await admin("workspace", "secret-export", "--workspace", id, "--off");
    expect(off.out).toEqual({ workspace: { id, name: "Epsilon", secret_export: false } });
    const trail = await withClient(db.url, async (client) => {
      const { rows } = await client.query(
        `SELECT group_name, primitive, primitive_id, actor, action, target, detail FROM audit
          WHERE workspace_id = $1 AND action LIKE 'secret_export.%' ORDER BY seq`,
        [id],
      );
      return rows;
    });
    expect(trail).toEqual([
      {
        group_name: "",
        primitive: "workspace",
        primitive_id: null,
        actor: "admin",
        action: "secret_export.enable",
        target: id,
        detail: { was: false },
      },
      {
        group_name: "",
        primitive: "workspace",
        primitive_id: null,
        actor: "admin",
        action: "secret_export.disable",
        target: id,
        detail: { was: true },
      },
    ]);
    for (const [args, message] of [
      [["--workspace", id], "give exactly one of --on and --off"],
      [["--workspace", id, "--on", "--off"], "give exactly one of --on and --off"],
      [["--workspace", "ws_nope", "--on"], "workspace 'ws_nope' not found"],
    ] as const) {
      const res = await admin("workspace", "secret-export", ...args);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(message);
    }
  });

  // Ten runs of the real command: under a loaded machine more than the default 20 s.
  it("refuses bad input in one line: unknown group, custom rate off Enterprise, bad tools, unknown command", {
    timeout: 60_000,
  }, async () => {
    const ws = await admin("workspace", "create", "--name", "Beta");
    for (const [args, message] of [
      [["key", "create", "--workspace", ws.out.workspace.id, "--group", "nope"], "group 'nope' not found"],
      [["workspace", "create", "--name", "C", "--rps", "5"], "--rps and --burst apply to enterprise workspaces only"],
      [["key", "create", "--workspace", ws.out.workspace.id, "--tools", "DROP TABLE"], "is not a tool name or pattern"],
      [["key", "revoke", "--id", "key_nope"], "key 'key_nope' not found"],
      [
        ["plan", "set", "--workspace", ws.out.workspace.id, "--plan", "gold"],
        "plan: must be one of starter, pro, enterprise",
      ],
      [["user", "delete"], "unknown admin command 'user delete'"],
      [["user", "create", "--email", "a@b.co", "--password", "short"], "password: must be 8 to 128 characters"],
      [["user", "create", "--email", "not-an-email", "--password", "long enough"], "email: not an email address"],
      [
        [
          "user",
          "create",
          "--email",
          "c@d.co",
          "--password",
          "long enough",
          "--workspace",
          ws.out.workspace.id,
          "--role",
          "root",
        ],
        "role: must be one of owner, admin, member, billing",
      ],
    ] as const) {
      const res = await admin(...args);
      expect(res.code).toBe(1);
      expect(res.stderr.trim().split("\n")).toHaveLength(1);
      expect(res.stderr).toContain(message);
    }
  });
});

describe("prim admin without a database", () => {
  // A port nothing listens on: help and a mistyped command must not need Postgres.
  const env = { ...process.env, DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" };

  it("prints its commands for --help and refuses an unknown command in one line, connecting to nothing", async () => {
    const help = await runPrimCommand(["admin", "--help"], env);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toContain("workspace create, workspace move");
    const typo = await runPrimCommand(["admin", "workspace", "craete", "--name", "A", "--json"], env);
    expect(typo.code).toBe(1);
    expect(typo.stderr.trim().split("\n")).toEqual([
      expect.stringContaining("unknown admin command 'workspace craete' ("),
    ]);
    // The same command spelled right does try the database, and says it cannot reach it.
    const right = await runPrimCommand(["admin", "workspace", "create", "--name", "A", "--json"], env);
    expect(right.code).toBe(1);
    expect(right.stderr).toContain("Postgres does not answer at postgres://postgres@127.0.0.1:1/none");
  });
});

describe("prim admin stripe sync", () => {
  it("creates Pro's product, meters and prices once; a rerun creates nothing; no key is one clear line", async () => {
    const { startStripeStandIn } = await import("@prim/billing/standin");
    const standin = await startStripeStandIn({ webhookSecret: "whsec_cli" });
    try {
      const env = { ...process.env, STRIPE_SECRET_KEY: "sk_test_cli", STRIPE_API_URL: standin.url };
      const sync = () => runPrimCommand(["admin", "stripe", "sync", "--json"], env);
      const first = await sync();
      expect(first).toMatchObject({ code: 0, stderr: "" });
      const made = JSON.parse(first.stdout);
      expect(made).toEqual({
        product: expect.stringMatching(/^prod_/),
        meters: { operations: expect.stringMatching(/^mtr_/), storage: expect.stringMatching(/^mtr_/) },
        prices: {
          base: expect.stringMatching(/^price_/),
          operations: expect.stringMatching(/^price_/),
          storage: expect.stringMatching(/^price_/),
        },
        created: expect.arrayContaining([made.product, made.meters.operations, made.prices.base]),
      });
      expect(made.created).toHaveLength(6);
      const again = JSON.parse((await sync()).stdout);
      expect(again).toEqual({ ...made, created: [] });

      const { STRIPE_SECRET_KEY: _, ...without } = env;
      const refused = await runPrimCommand(["admin", "stripe", "sync", "--json"], without);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split("\n")).toEqual([expect.stringContaining("STRIPE_SECRET_KEY is required")]);
    } finally {
      await standin.close();
    }
  });

  it("lists cells, closes and opens one; a move names what it lacks in one line", { timeout: 120_000 }, async () => {
    const pool = await openPool(db.url);
    try {
      await registerCell(pool, "cell-x", "http://127.0.0.1:1");
    } finally {
      await pool.end();
    }
    const listed = await admin("cell", "list");
    expect(listed.out.cells).toEqual([
      { id: "cell-x", internal_url: "http://127.0.0.1:1", state: "open", workspaces: 0, seen_at: expect.any(String) },
    ]);
    expect((await admin("cell", "close", "--id", "cell-x")).out).toEqual({ id: "cell-x", state: "closed" });
    expect((await admin("cell", "list")).out.cells[0].state).toBe("closed");
    expect((await admin("cell", "open", "--id", "cell-x")).out).toEqual({ id: "cell-x", state: "open" });
    expect((await admin("cell", "close", "--id", "nope")).stderr).toContain("no cell 'nope'");
    const move = await admin("workspace", "move", "--workspace", "ws_x");
    expect(move.code).not.toBe(0);
    expect(move.stderr.trim().split("\n")).toEqual([expect.stringContaining("--to is required")]);
    const crash = await admin("workspace", "move", "--workspace", "ws_x", "--to", "cell-x", "--crash-after", "never");
    expect(crash.stderr).toContain("--crash-after must be one of freeze, quiesce, pack");
  });
});
