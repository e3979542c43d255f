#!/usr/bin/env node
// The dashboard's server (`node server.mjs [-p port] [-H host]`; `npm start`): Next's request
// handler behind Node's own HTTP server, so that each request carries the address of the socket
// it came from — `next start` hands route handlers none, and the `x-forwarded-for` it adds keeps
// whatever a client sent. Sign-in limits count by that address (or, behind a proxy named by
// PRIM_CLIENT_IP_HEADER, by the proxy's header: src/server/client-address.ts).
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import next from "next";

/** Set here from the socket, after dropping any copy a client sent (src/server/client-address.ts reads it). */
const SOCKET_HEADER = "x-prim-socket-address";
/** What the auth library reads; only the auth route sets it, so a client's copy is dropped too. */
const CLIENT_HEADER = "x-prim-client-address";

function option(flag, fallback) {
  const at = process.argv.indexOf(flag);
  return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}

const port = Number(option("-p", "3000"));
const hostname = option("-H", "0.0.0.0");
// A production server whatever the caller's environment (a test runner sets NODE_ENV=test).
process.env.NODE_ENV = "production";
const app = next({ dev: false, dir: fileURLToPath(new URL(".", import.meta.url)), hostname, port });
const handle = app.getRequestHandler();
await app.prepare();
// Tells the app (same process) that SOCKET_HEADER comes from this server, not from a client.
globalThis[Symbol.for("prim.web.socketAddressHeader")] = SOCKET_HEADER;

const server = createServer((req, res) => {
  delete req.headers[CLIENT_HEADER];
  req.headers[SOCKET_HEADER] = req.socket.remoteAddress ?? "";
  handle(req, res);
});
server.listen(port, hostname, () => {
  console.log(`prim web: listening on http://${hostname}:${port}`);
});
// Stops taking connections, ends the idle keep-alive ones (a browser holds some open), and
// gives requests in flight 5 s before exiting regardless.
const stop = () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 5_000).unref();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
