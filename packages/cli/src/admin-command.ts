import { parseArgs } from "node:util";
import { ADMIN_COMMANDS, adminUsage, asksForHelp } from "./admin-usage.js";
import { cellEnvSource, databaseUrl, redisUrl, stripeConfig } from "./env.js";

/**
 * `prim admin <noun> <verb> … --json` (CLOUD.md, Commands): the operator's commands against the
 * control plane, each printing one JSON object. @prim/db and @prim/cells are loaded only here,
 * after the arguments are checked: `--help` and a typo connect nowhere.
 */
export async function adminCommand(args: string[]): Promise<void> {
  if (args.length === 0 || args[0] === "help" || args[0] === "--help" || args[0] === "-h") {
    console.log(adminUsage());
    return;
  }
  // `usage`, `fsck` are nouns without a verb; every other command is `<noun> <verb>`.
  const words = ADMIN_COMMANDS.includes(args[0] as string) ? 1 : 2;
  const verb = args[1];
  const command = args.slice(0, words).join(" ");
  if (!ADMIN_COMMANDS.includes(command)) {
    // `prim admin cell --help`: the noun's commands.
    if (asksForHelp(args) && ADMIN_COMMANDS.some((c) => c.startsWith(`${args[0]} `))) {
      console.log(adminUsage(args[0]));
      return;
    }
    throw new Error(`unknown admin command '${command}' (${ADMIN_COMMANDS.join(", ")})`);
  }
  if (asksForHelp(args.slice(words))) {
    console.log(adminUsage(command));
    return;
  }
  if (command === "fsck") return fsckCommand(args.slice(1));
  if (command === "stripe sync") return stripeSyncCommand(args.slice(2));
  if (command === "workspace move" || command === "cell rebuild") return cellsCommand(command, args.slice(2));
  const rest = args.slice(words);
  const { values } = parseArgs({
    args: rest,
    options: {
      json: { type: "boolean" },
      name: { type: "string" },
      plan: { type: "string" },
      owner: { type: "string" },
      rps: { type: "string" },
      burst: { type: "string" },
      workspace: { type: "string" },
      group: { type: "string" },
      tools: { type: "string" },
      id: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      role: { type: "string" },
      on: { type: "boolean" },
      off: { type: "boolean" },
      "read-only": { type: "boolean" },
      "expires-in": { type: "string" },
      "expires-at": { type: "string" },
      "ip-allow": { type: "string" },
      budget: { type: "string" },
      "database-url": { type: "string" },
    },
  });
  const db = await import("@prim/db");
  const required = (name: keyof typeof values): string => {
    const value = values[name];
    if (typeof value !== "string" || value === "") throw new Error(`--${name} is required`);
    return value;
  };
  const int = (name: "rps" | "burst"): number | undefined => {
    const v = values[name];
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new Error(`--${name} must be a positive integer`);
    return Number(v);
  };
  const pool = await db.openPool(values["database-url"] ?? databaseUrl());
  try {
    let out: unknown;
    switch (command) {
      case "workspace create":
        out = await db.createWorkspace(pool, {
          name: required("name"),
          plan: values.plan,
          owner: values.owner,
          rps: int("rps"),
          burst: int("burst"),
        });
        break;
      case "key create":
        out = await db.createKey(pool, {
          workspace: required("workspace"),
          group: values.group,
          tools: values.tools?.split(",").map((t) => t.trim()),
          name: values.name,
          readOnly: values["read-only"] === true,
          ...keyLimits(db, values),
        });
        break;
      case "key revoke": {
        const revocations = new db.Revocations(redisUrl());
        try {
          out = await db.revokeKey(pool, required("id"), (hash) => revocations.publish(hash));
        } finally {
          await revocations.close();
        }
        break;
      }
      case "plan set": {
        const revocations = new db.Revocations(redisUrl());
        try {
          out = await db.setPlan(
            pool,
            { workspace: required("workspace"), plan: required("plan"), rps: int("rps"), burst: int("burst") },
            (ws) => revocations.planChanged(ws),
          );
        } finally {
          await revocations.close();
        }
        break;
      }
      case "usage": {
        const month = db.usageMonth();
        const revocations = new db.Revocations(redisUrl());
        try {
          const workspace = required("workspace");
          const live = await revocations.operations(workspace, month);
          out = await db.readUsage(pool, workspace, { month, liveOperations: live });
        } finally {
          await revocations.close();
        }
        break;
      }
      case "cell list":
        out = {
          cells: (await db.listCells(pool)).map((c) => ({
            id: c.id,
            internal_url: c.internalUrl,
            state: c.state,
            workspaces: c.workspaces,
            seen_at: new Date(c.seenAt).toISOString(),
          })),
        };
        break;
      case "cell open":
      case "cell close": {
        const id = required("id");
        if (!(await db.setCellState(pool, id, verb === "open" ? "open" : "closed"))) throw new Error(`no cell '${id}'`);
        out = { id, state: verb === "open" ? "open" : "closed" };
        break;
      }
      case "workspace secret-export": {
        // Vault values in group archives for another key (CLOUD.md); audited as the operator.
        if (values.on === values.off) throw new Error("give exactly one of --on and --off");
        out = await db.setSecretExport(pool, {
          workspace: required("workspace"),
          enabled: values.on === true,
          actor: "admin",
        });
        break;
      }
      case "workspace deleted":
        // The `workspace.delete` entries the audit keeps after the workspace row is gone.
        out = { deleted: await db.deletedWorkspaces(pool) };
        break;
      case "user create":
        out = await db.createUser(pool, {
          email: required("email"),
          password: required("password"),
          name: values.name,
          workspace: values.workspace,
          role: values.role,
        });
        break;
      default:
        throw new Error(`unknown admin command '${command}'`);
    }
    console.log(JSON.stringify(out));
  } finally {
    await pool.end();
  }
}

/**
 * `prim admin fsck --workspace W --json`: the cell's consistency check (@prim/cells, loaded
 * only here) with the api's configuration; prints the report and exits 1 if it is not clean.
 */
async function fsckCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { json: { type: "boolean" }, workspace: { type: "string" }, "database-url": { type: "string" } },
  });
  if (!values.workspace) throw new Error("--workspace is required");
  const cells = await import("@prim/cells");
  const env = cells.readCellEnv(cellEnvSource(values["database-url"]));
  const report = await cells.fsckWorkspace(env, values.workspace);
  console.log(JSON.stringify(report));
  if (!report.ok) process.exitCode = 1;
}

/**
 * `prim admin stripe sync --json`: makes Stripe hold Pro's product, meters and prices
 * (@prim/billing `syncStripe`; idempotent), with `STRIPE_SECRET_KEY` and, for a stand-in,
 * `STRIPE_API_URL`. Prints what Stripe holds and what this run created.
 */
async function stripeSyncCommand(args: string[]): Promise<void> {
  parseArgs({ args, options: { json: { type: "boolean" } } });
  const config = stripeConfig();
  const billing = await import("@prim/billing");
  const stripe = billing.createStripe(config);
  console.log(JSON.stringify(await billing.syncStripe(stripe)));
}

/**
 * `prim admin workspace move --workspace W --to CELL [--lease-ms N] --json` and `prim admin cell
 * rebuild --id CELL [--to CELL] --json` (@prim/cells, loaded only here), with the cells'
 * configuration (PRIM_INTERNAL_SECRET reaches the cells). Progress goes to stderr.
 */
async function cellsCommand(command: string, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      json: { type: "boolean" },
      workspace: { type: "string" },
      id: { type: "string" },
      to: { type: "string" },
      "lease-ms": { type: "string" },
      "crash-after": { type: "string" },
      "database-url": { type: "string" },
    },
  });
  const cells = await import("@prim/cells");
  const env = cells.readCellEnv(cellEnvSource(values["database-url"]));
  if (command === "cell rebuild") {
    if (!values.id) throw new Error("--id is required (the lost cell)");
    console.log(JSON.stringify(await cells.rebuildCell(env, values.id, { to: values.to })));
    return;
  }
  if (!values.workspace) throw new Error("--workspace is required");
  if (!values.to) throw new Error("--to is required (the cell to move to)");
  const lease = values["lease-ms"];
  if (lease !== undefined && !/^\d+$/.test(lease)) throw new Error("--lease-ms must be a positive integer");
  const crashAfter = values["crash-after"];
  if (crashAfter !== undefined && !(cells.MOVE_STEPS as readonly string[]).includes(crashAfter)) {
    throw new Error(`--crash-after must be one of ${cells.MOVE_STEPS.join(", ")}`);
  }
  const report = await cells.moveWorkspace(env, values.workspace, values.to, {
    leaseMs: lease === undefined ? undefined : Number(lease),
    crashAfter: crashAfter as (typeof cells.MOVE_STEPS)[number] | undefined,
    log: (line) => console.error(`prim: ${line}`),
  });
  console.log(JSON.stringify(report));
}

/** `--expires-in 1h | --expires-at <iso>`, `--ip-allow "10.0.0.0/8,::1/128"`, `--budget 1000[/day|/month]`. */
function keyLimits(
  db: typeof import("@prim/db"),
  values: { "expires-in"?: string; "expires-at"?: string; "ip-allow"?: string; budget?: string },
): { expiresAt?: number; ipAllow?: string[]; budget?: import("@prim/db").KeyLimits["budget"] } {
  const inText = values["expires-in"];
  const atText = values["expires-at"];
  if (inText !== undefined && atText !== undefined) throw new Error("give --expires-in or --expires-at, not both");
  let expiresAt: number | undefined;
  if (inText !== undefined) expiresAt = Date.now() + db.parseDuration(inText);
  if (atText !== undefined) {
    expiresAt = Date.parse(atText);
    if (Number.isNaN(expiresAt)) throw new Error(`--expires-at: '${atText}' is not an ISO 8601 time`);
  }
  return {
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(values["ip-allow"] === undefined ? {} : { ipAllow: db.parseIpAllow(values["ip-allow"]) }),
    ...(values.budget === undefined ? {} : { budget: db.parseBudget(values.budget) }),
  };
}
