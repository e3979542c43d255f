#!/usr/bin/env node
// `npm run cloud` (CLOUD.md, Commands): migrations, then apps/api (the cell, with its internal
// listener and the OAuth authorization server) and apps/mcp (over that listener) in this
// process, and apps/web (`next start`, built by `npm run build`) as a child; prints their URLs.
// Postgres or Redis down: one line naming it and how to start it, exit 1. Without
// PRIM_INTERNAL_SECRET a random one is made for this run (all three apps get it). Without
// STRIPE_SECRET_KEY the Stripe stand-in (@prim/billing/standin) serves billing locally: its products
// and prices are synced, its webhooks go to the api. Without SMTP_URL a local mail capture
// (@prim/mail) receives the dashboard's mail: each message's links are printed here, and the
// dashboard lists the messages at /dev/mail (served only then, and only on a loopback address).
// `npm run cloud -- --cells N`: N api cells as processes behind HAProxy (cloud-cells.mjs) in
// place of the one api.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startApi } from "@prim/api";
import { startMailCapture } from "@prim/mail";
import { startMcp } from "@prim/mcp-server";
import { startCellsCloud } from "./cloud-cells.mjs";

/** `--cells N` (N ≥ 2): several cells behind HAProxy; absent, one api in this process. */
function cellsArgument(argv) {
  const at = argv.indexOf("--cells");
  if (at < 0) return 1;
  const n = Number(argv[at + 1]);
  if (!Number.isInteger(n) || n < 1 || n > 26) {
    console.error("prim cloud: --cells takes a number of cells, 1 to 26");
    process.exit(1);
  }
  return n;
}
const cellCount = cellsArgument(process.argv.slice(2));

const webDir = fileURLToPath(new URL("../apps/web", import.meta.url));
// The dashboard's own server (Next's handler behind node:http: it sees each socket's address).
const webServer = fileURLToPath(new URL("../apps/web/server.mjs", import.meta.url));

const env = { ...process.env };
env.PRIM_INTERNAL_SECRET ??= randomBytes(32).toString("hex");
let api;
let mcp;
let standin;
let mail;
try {
  if (!env.SMTP_URL) {
    mail = await startMailCapture({
      secret: env.PRIM_INTERNAL_SECRET,
      onMessage: (m) => console.log(`prim cloud: mail to ${m.to.join(", ")}: ${m.subject}\n  ${m.links.join("\n  ")}`),
    });
    env.SMTP_URL = mail.smtpUrl;
  }
  if (!env.STRIPE_SECRET_KEY) {
    const [billing, { startStripeStandIn }] = await Promise.all([
      import("@prim/billing"),
      import("@prim/billing/standin"),
    ]);
    env.STRIPE_WEBHOOK_SECRET = `whsec_${randomBytes(24).toString("hex")}`;
    standin = await startStripeStandIn({ webhookSecret: env.STRIPE_WEBHOOK_SECRET });
    env.STRIPE_SECRET_KEY = "sk_test_prim_local";
    env.STRIPE_API_URL = standin.url;
    await billing.syncStripe(billing.createStripe({ secretKey: env.STRIPE_SECRET_KEY, apiUrl: standin.url }));
  }
  if (cellCount > 1) {
    const cloud = await startCellsCloud(env, cellCount);
    api = { url: cloud.url, internalUrl: cloud.internalUrl, api: { close: cloud.close } };
  } else {
    api = await startApi(env);
  }
  standin?.setWebhookUrl(`${api.url}/v1/billing/webhook`);
  mcp = await startMcp({ ...env, PRIM_INTERNAL_URL: env.PRIM_INTERNAL_URL ?? api.internalUrl });
} catch (err) {
  console.error(`prim cloud: ${err instanceof Error ? err.message : String(err)}`);
  await api?.api.close();
  await standin?.close();
  await mail?.close();
  process.exit(1);
}
console.log(`prim cloud: api ${api.url}${cellCount > 1 ? ` (HAProxy in front of ${cellCount} cells)` : ""}`);
console.log(`prim cloud: mcp ${mcp.url}/mcp`);
if (standin !== undefined) console.log(`prim cloud: stripe stand-in ${standin.url} (STRIPE_SECRET_KEY unset)`);

let web;
const webPort = env.PRIM_WEB_PORT ?? "3000";
if (existsSync(`${webDir}/.next/BUILD_ID`)) {
  // Its own process group, so that stopping it stops next-server too.
  const webEnv = { NEXT_TELEMETRY_DISABLED: "1", ...env, PRIM_INTERNAL_URL: env.PRIM_INTERNAL_URL ?? api.internalUrl };
  if (mail !== undefined) webEnv.PRIM_MAIL_CAPTURE_URL = mail.url;
  web = spawn(process.execPath, [webServer, "-p", webPort], {
    cwd: webDir,
    detached: true,
    stdio: ["ignore", "ignore", "inherit"],
    env: webEnv,
  });
  const dashboard = env.PRIM_DASHBOARD_URL ?? `http://localhost:${webPort}`;
  console.log(`prim cloud: web ${dashboard}`);
  if (mail !== undefined) console.log(`prim cloud: mail captured at ${dashboard}/dev/mail (SMTP_URL unset)`);
} else {
  console.log("prim cloud: web not built (npm run build builds it); api and mcp serve without it");
}

const stop = (signal) => {
  console.log(`prim cloud: ${signal}, closing`);
  if (web?.pid !== undefined) {
    try {
      process.kill(-web.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  Promise.all([mcp.mcp.close(), api.api.close(), standin?.close(), mail?.close()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGINT", () => stop("SIGINT"));
process.once("SIGTERM", () => stop("SIGTERM"));
