#!/usr/bin/env node
// `npm run cloud` (CLOUD.md, Commands): migrations, then apps/api (the cell, with its internal
// listener) and apps/mcp (over that listener) in this process; prints their URLs. Postgres or
// Redis down: one line naming it and how to start it, exit 1. Without PRIM_INTERNAL_SECRET a
// random one is made for this process (both apps are here). The dashboard (apps/web) follows.
import { randomBytes } from "node:crypto";
import { startApi } from "@prim/api";
import { startMcp } from "@prim/mcp-server";

const env = { ...process.env };
env.PRIM_INTERNAL_SECRET ??= randomBytes(32).toString("hex");
let api;
let mcp;
try {
  api = await startApi(env);
  mcp = await startMcp({ ...env, PRIM_INTERNAL_URL: env.PRIM_INTERNAL_URL ?? api.internalUrl });
} catch (err) {
  console.error(`prim cloud: ${err instanceof Error ? err.message : String(err)}`);
  await api?.api.close();
  process.exit(1);
}
console.log(`prim cloud: api ${api.url}`);
console.log(`prim cloud: mcp ${mcp.url}/mcp`);
const stop = (signal) => {
  console.log(`prim cloud: ${signal}, closing`);
  Promise.all([mcp.mcp.close(), api.api.close()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGINT", () => stop("SIGINT"));
process.once("SIGTERM", () => stop("SIGTERM"));
