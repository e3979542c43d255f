import { parseArgs } from "node:util";
import { forgetEnvSecrets, ROOT_TOKEN_FLAG_WARNING, readEnv } from "./env.js";

const USAGE = `Usage: prim <command> [options]

Commands:
  dev     Start the local engine (REST under /v1)
          --port N          port to listen on (default 7777, env PRIM_PORT)
          --host H          interface (default localhost)
          --data DIR        data directory (default ./.prim, env PRIM_DATA_DIR)
          --root-token T    require this Bearer token; prefer env PRIM_ROOT_TOKEN
                            (a flag is visible to other users in ps)
          --durable         answer a write only once it is fsynced (survives a
                            power cut; env PRIM_DURABILITY=durable); default fast:
                            committed, survives the process dying
          MCP (Streamable HTTP) is served at /mcp/<group>
  mcp     An MCP server on stdio for one group
          --group G         the group (created on first use)
          --data DIR        data directory (default ./.prim, env PRIM_DATA_DIR)
          --tools P         comma-separated tool patterns to offer (kv_*,db_query)
          --root-token T    token of the running prim dev, if it has one;
                            prefer env PRIM_ROOT_TOKEN
          Relays to the prim dev that owns DIR; without one, opens DIR itself.
  migrate Create the cloud's control-plane database if needed and apply pending
          SQL migrations (idempotent; refuses a changed applied migration)
          --database-url U  default env DATABASE_URL, else
                            postgres://postgres@localhost:5432/prim
  admin   The cloud operator's commands; each prints one JSON object (--json)
          workspace create|move|secret-export, key create|revoke, plan set, usage,
          user create, cell list|open|close|rebuild, fsck, stripe sync
          prim admin --help lists them with their options; prim admin <command>
          --help shows one (neither connects anywhere)
          env DATABASE_URL (or --database-url), REDIS_URL; fsck, workspace move and
          cell rebuild read the api's cell configuration (PRIM_DATA_DIR, PRIM_BLOBS,
          S3_*, PRIM_MASTER_KEY, PRIM_INTERNAL_SECRET)
  login   Check an API key (GET /v1/whoami) and store it for that API
          --api URL         default env PRIM_API_URL, else the stored default,
                            else http://localhost:8787
          --key K           the key (pk_…); prefer env PRIM_API_KEY or the prompt
                            (a flag is visible to other users in ps)
          --json            print one JSON object
          Stored in $PRIM_CONFIG_DIR (else $XDG_CONFIG_HOME/prim, else
          ~/.config/prim)/credentials.json, mode 0600; the last login is the default
  logout  Remove the stored key for an API (default: as login picks it)
          --api URL | --all --json
  whoami  Who the key in use is: workspace and scope, and where the key came from
          --api URL --json  (key: env PRIM_API_KEY, else the stored one)
  key     Minted keys (cloud): the key in use (as whoami finds it) makes narrower ones
          mint [--group G] [--tools "kv_get,fs_*"] [--read-only] [--name N]
               [--expires-in 1h] [--ip-allow "10.0.0.0/8,::1/128"]
               [--budget 1000 | 1000/day | 1000/month]
                            a child at most as wide as the key (omitted: the key's
                            own; a key with a budget gives the child part of it);
                            prints the new key once
          list              the keys minted under the key, and theirs
          revoke ID         revokes that key and every key under it
          --api URL --key K --json  as whoami
          attenuate [--key K] [--group G] [--tools P] [--read-only] [--expires-in D] [--ip CIDR] [--json]
                            narrows a key offline (no request) and prints the pa_
                            token; it answers as the key with every caveat applied,
                            can be narrowed again, and stops when the key is revoked
  push    Copy a local group to the cloud: every primitive with its content
          <group>           the local group
          --to G            the cloud group (default: the same name)
          --data DIR        data directory (default ./.prim, env PRIM_DATA_DIR);
                            a running prim dev on it is used over REST
          --replace         a cloud group that holds primitives is refused unless
                            given; each one replaced is snapshotted first
          --fresh           build a new archive instead of resuming the last one
          --api URL --key K as login; needs a workspace key
          --json            print one JSON object (else progress on a terminal)
  pull    The reverse: a cloud group into the local data directory
          <group> --to G --data DIR --replace --fresh --api URL --key K --json
`;

async function dev(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      "root-token": { type: "string" },
      durable: { type: "boolean" },
    },
    strict: true,
  });
  const env = readEnv();
  forgetEnvSecrets();
  if (values["root-token"] !== undefined) console.error(ROOT_TOKEN_FLAG_WARNING);
  const port = values.port === undefined ? (env.PRIM_PORT ?? 7777) : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: not a port number: ${values.port}`);
  const dataDir = values.data ?? env.PRIM_DATA_DIR ?? ".prim";
  const [{ startDevServer }, { embedderFromEnv }] = await Promise.all([
    import("./dev-server.js"),
    import("./local-engine.js"),
  ]);
  const server = await startDevServer({
    port,
    host: values.host,
    dataDir,
    rootToken: values["root-token"] ?? env.PRIM_ROOT_TOKEN,
    embedder: embedderFromEnv(env),
    durability: values.durable ? "durable" : (env.PRIM_DURABILITY ?? "fast"),
  });
  console.log(`prim dev: listening on ${server.url} (data in ${dataDir}; ${server.engine.durability} writes)`);
  // A signal to the whole process group (Ctrl-C in a terminal, a supervisor's kill -TERM -<pgid>)
  // reaches the SQL hosts too; the engine counts those as closed, so a shutdown reports what it
  // closed and exits 0. A failure to close is one line and exit 1, never a stack: the data is
  // safe either way (SQLite's WAL), and the line says what did not close. A second signal while
  // closing takes the default action (the process ends at once).
  const stop = (signal: string) => {
    console.log(`prim dev: ${signal}, closing`);
    server.close().then(
      () => {
        console.log(`prim dev: closed ${server.url} and the data in ${dataDir}`);
        process.exit(0);
      },
      (err: unknown) => {
        console.error(`prim dev: closing failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}

/** `command`'s block of USAGE (`pull` shares `push`'s options), or undefined for no command. */
function usageOf(command: string): string | undefined {
  const lines = USAGE.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`  ${command} `));
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length && /^ {3,}\S/.test(lines[end] as string)) end++;
  return `Usage: prim ${command} [options]\n\n${lines.slice(start, end).join("\n")}`;
}

/**
 * Each command's module is loaded when it runs, so a command loads only what it uses: `prim
 * admin …` or `prim --help` does not load the engine and the HTTP server (measured: `prim
 * --help` 0.77 s with every command loaded, issue 36).
 */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // `prim <command> --help`: the command's part of the usage, before anything runs.
  if (command !== undefined && command !== "admin" && (rest.includes("--help") || rest.includes("-h"))) {
    const usage = usageOf(command);
    if (usage !== undefined) {
      console.log(usage);
      return;
    }
  }
  switch (command) {
    case "dev":
      return dev(rest);
    case "mcp":
      return (await import("./mcp-command.js")).mcp(rest);
    case "migrate":
      return (await import("./migrate-command.js")).migrateCommand(rest);
    case "admin":
      return (await import("./admin-command.js")).adminCommand(rest);
    case "login":
      return (await import("./login-command.js")).login(rest);
    case "logout":
      return (await import("./login-command.js")).logout(rest);
    case "whoami":
      return (await import("./login-command.js")).whoami(rest);
    case "key":
      if (rest[0] === "attenuate") return (await import("./key-attenuate.js")).keyAttenuate(rest.slice(1));
      return (await import("./key-command.js")).keyCommand(rest);
    case "push":
    case "pull":
      return (await import("./transfer/transfer-command.js")).transfer(command, rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return;
    default:
      throw new Error(`unknown command '${command}'\n\n${USAGE}`);
  }
}
