// `npm run cloud -- --cells N` (issue 43, "Routing at the edge"): N api cells as processes of
// their own on loopback (apps/api/bin/prim-api.js; ids cell-a, cell-b, …; data in
// PRIM_DATA_DIR/<cell id>, default .prim-cloud/cells/<cell id>; one master key for all of them,
// PRIM_MASTER_KEY or .prim-cloud/cells/master.key), and HAProxy in front of them on the public
// api port with its map watcher (@prim/cells `startEdge`: config and runtime socket in
// .prim-cloud/edge); the cells read the client's address from the X-Forwarded-For HAProxy
// appends. Started one after the other: two apps/api starting together on a fresh
// database race to create the same audit partition.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startEdge } from "@prim/cells";

const apiBin = fileURLToPath(new URL("../apps/api/bin/prim-api.js", import.meta.url));

/** The cells' shared master key: the configured one, else one kept under `root`. */
function masterKey(env, root) {
  if (env.PRIM_MASTER_KEY) return env.PRIM_MASTER_KEY;
  const file = join(root, "master.key");
  if (!existsSync(file)) {
    mkdirSync(root, { recursive: true });
    writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600 });
  }
  return readFileSync(file, "utf8").trim();
}

/** One cell: its process, and its public and internal URLs once it prints them. */
function startCell(id, env) {
  const child = spawn(process.execPath, [apiBin], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((done, fail) => {
    const onData = (chunk) => {
      const text = chunk.toString();
      output += text;
      for (const line of text.split("\n")) if (line.trim() !== "") console.log(`[${id}] ${line}`);
      const url = /api listening on (http:\/\/\S+)/.exec(output)?.[1];
      const internalUrl = /internal invoke on (http:\/\/\S+)/.exec(output)?.[1];
      if (url !== undefined && internalUrl !== undefined) done({ id, url, internalUrl, child });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, signal) => fail(new Error(`cell ${id} exited (${code ?? signal}) while starting`)));
  });
}

/**
 * Starts `count` cells and the edge. Answers `{ url, internalUrl, cells, edge, close }`: `url`
 * is the edge (the public api), `internalUrl` the first cell's internal listener (apps/mcp's
 * and the dashboard's fallback).
 */
export async function startCellsCloud(env, count) {
  const root = resolve(env.PRIM_DATA_DIR ?? ".prim-cloud/cells");
  const apiPort = Number(env.PRIM_API_PORT ?? "8787");
  const host = env.PRIM_LISTEN_HOST ?? "127.0.0.1";
  const shared = {
    ...env,
    PRIM_MASTER_KEY: masterKey(env, root),
    PRIM_PUBLIC_API_URL: env.PRIM_PUBLIC_API_URL ?? `http://localhost:${apiPort}`,
    PRIM_API_PORT: "0",
    PRIM_INTERNAL_PORT: "0",
    PRIM_LISTEN_HOST: "127.0.0.1",
    PRIM_INTERNAL_HOST: "127.0.0.1",
    // Behind HAProxy every socket is HAProxy's: the client's address is the header it appends.
    PRIM_CLIENT_IP_HEADER: env.PRIM_CLIENT_IP_HEADER ?? "x-forwarded-for",
  };
  const cells = [];
  let edge;
  const close = async () => {
    await edge?.close();
    await Promise.all(
      cells.map(
        (cell) =>
          new Promise((done) => {
            if (cell.child.exitCode !== null) return done();
            cell.child.once("exit", done);
            cell.child.kill("SIGTERM");
          }),
      ),
    );
  };
  try {
    for (let i = 0; i < count; i++) {
      const id = `cell-${String.fromCharCode(97 + i)}`;
      cells.push(await startCell(id, { ...shared, PRIM_CELL_ID: id, PRIM_DATA_DIR: join(root, id) }));
    }
    edge = await startEdge({
      databaseUrl: env.DATABASE_URL ?? "postgres://postgres@localhost:5432/prim",
      cells: cells.map(({ id, url }) => ({ id, url })),
      bind: { host, port: apiPort },
      dir: resolve(".prim-cloud/edge"),
      onError: (err) => console.error(`prim cloud: edge map: ${err instanceof Error ? err.message : String(err)}`),
    });
  } catch (err) {
    await close();
    throw err;
  }
  return { url: edge.url, internalUrl: cells[0].internalUrl, cells, edge, close };
}
