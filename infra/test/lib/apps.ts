import { readApiEnv } from "@prim/api";
import { readEnv as readCliEnv } from "@prim/cli";
import { readMcpEnv } from "@prim/mcp-server";
import { webEnv } from "@prim/web/env";

/**
 * The apps as infra/ runs them: each app's own configuration reader (apps/*\/src/env.ts, the zod
 * schemas the processes validate their environment with), its ports and its health route.
 */
export type AppName = "api" | "mcp" | "web" | "migrate";

export interface AppConfig {
  /** The variables the app's schema kept (zod drops names it does not know). */
  known: Set<string>;
  /** Ports the app listens on: the public one first. */
  ports: { public: number; internal?: number };
  /** Computed public addresses, as the app itself derives them. */
  urls: Record<string, string>;
  env: Record<string, unknown>;
}

/**
 * Variables an app's schema does not list but that it uses all the same, so they may be set:
 * AWS_* (the AWS SDK's credentials chain, for the api's S3 blobs; CLOUD.md: "the usual AWS
 * variables") and NEXT_TELEMETRY_DISABLED (read by Next.js itself).
 */
export const UNLISTED: Record<AppName, RegExp> = {
  api: /^AWS_[A-Z_]+$/,
  mcp: /^$/,
  web: /^NEXT_TELEMETRY_DISABLED$/,
  migrate: /^$/,
};

/** Where the images and manifests aim their health checks. */
export const HEALTH_PATH: Record<Exclude<AppName, "migrate">, string> = {
  api: "/health",
  mcp: "/health",
  web: "/api/auth/ok",
};

/** The variable naming each app's public port, and its internal one (the api's invoke listener). */
export const PORT_VARIABLE: Record<Exclude<AppName, "migrate">, string> = {
  api: "PRIM_API_PORT",
  mcp: "PRIM_MCP_PORT",
  web: "PRIM_WEB_PORT",
};

/**
 * Validates `env` with the app's own reader (it throws, naming each bad variable, as the process
 * would at start) and tells what it kept. `prim migrate` is the CLI: its schema
 * (packages/cli/src/env.ts) and DATABASE_URL, which `databaseUrl()` reads beside it.
 */
export function readApp(app: AppName, env: Record<string, string>): AppConfig {
  const listed = Object.fromEntries(Object.entries(env).filter(([name]) => !UNLISTED[app].test(name)));
  if (app === "migrate") {
    const url = listed.DATABASE_URL;
    if (url === undefined || !/^postgres(ql)?:\/\//.test(url)) throw new Error("DATABASE_URL: a postgres:// URL");
    const known = keys(readCliEnv(listed)).add("DATABASE_URL");
    return { known, ports: { public: 0 }, urls: {}, env: listed };
  }
  if (app === "api") {
    const e = readApiEnv(listed);
    const urls = {
      publicApiUrl: e.publicApiUrl,
      authUrl: e.authUrl,
      mcpResource: e.mcpResource,
      dashboardUrl: e.dashboardUrl,
    };
    return { known: keys(e), ports: { public: e.PRIM_API_PORT, internal: e.PRIM_INTERNAL_PORT }, urls, env: e };
  }
  if (app === "mcp") {
    const e = readMcpEnv(listed);
    const urls = { mcpResource: `${e.publicMcpUrl}/mcp`, authUrl: e.authUrl, internalUrl: e.PRIM_INTERNAL_URL };
    return { known: keys(e), ports: { public: e.PRIM_MCP_PORT }, urls, env: e };
  }
  const e = webEnv(listed);
  const urls = {
    dashboardUrl: e.dashboardUrl,
    authUrl: e.authUrl,
    publicApiUrl: e.apiUrl,
    /** The Connect dialog's MCP URL: the resource OAuth tokens are issued for. */
    mcpResource: e.mcpUrl,
    internalUrl: e.PRIM_INTERNAL_URL,
  };
  return { known: keys(e), ports: { public: e.PRIM_WEB_PORT }, urls, env: e };
}

function keys(parsed: object): Set<string> {
  return new Set(Object.keys(parsed).filter((k) => /^[A-Z][A-Z0-9_]*$/.test(k)));
}

/** Names set in `env` that the app's schema does not know (and that are not UNLISTED). */
export function unknownNames(app: AppName, env: Record<string, string>, config: AppConfig): string[] {
  return Object.keys(env).filter((name) => !UNLISTED[app].test(name) && !config.known.has(name));
}

/**
 * Stand-ins for values the files leave to the operator (Secret placeholders, compose variables
 * passed through from the shell), valid for the schemas, so that the rest can be checked.
 */
export const STAND_INS: Record<string, string> = {
  DATABASE_URL: "postgres://prim:secret@db.internal:5432/prim",
  REDIS_URL: "redis://:secret@redis.internal:6379",
  PRIM_INTERNAL_SECRET: "s".repeat(40),
  PRIM_MASTER_KEY: "ab".repeat(32),
  STRIPE_SECRET_KEY: "sk_test_stand_in",
  STRIPE_WEBHOOK_SECRET: "whsec_stand_in",
  AWS_ACCESS_KEY_ID: "AKIASTANDIN",
  AWS_SECRET_ACCESS_KEY: "stand-in",
  SMTP_URL: "smtps://prim:secret@smtp.internal:465",
};

export function standIn(name: string): string {
  const value = STAND_INS[name];
  if (value === undefined)
    throw new Error(`${name}: no stand-in value (add one to STAND_INS in infra/test/lib/apps.ts)`);
  return value;
}
