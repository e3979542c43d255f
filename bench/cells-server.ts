// Child process for bench/cells.ts, one of:
//   a cell: an apps/api process as `npm run cloud` starts it (`startApi`: public listener,
//     internal listener, its internal URL registered in `cells`), so each cell has an event
//     loop of its own. The parent owns the database, the temp directory and the secrets, and
//     hands the cell its environment over IPC.
//   a bare forwarder (diagnostic): a node:http server whose every request goes to
//     `forwardRequest` from @prim/cells, the function a cell forwards with, toward one cell's
//     internal listener; no Fastify, authentication or placement lookup in front of it.
// Protocol over IPC:
//   parent → child  { type: "start", env } or { type: "proxy", cellUrl, secret }
//   child → parent  { type: "ready", url, internalUrl } or { type: "failed", message }
//   parent → child  { type: "cpu" }   child → parent { type: "cpu", user, system }  (µs)
//   parent → child  { type: "stop" }  child closes what it started and exits
import { createServer, type Server } from "node:http";
import { type ApiApp, startApi } from "@prim/api";
import { forwardRequest } from "@prim/cells";
import { serveParent } from "./lib/serve-parent.js";

export type ParentMessage =
  | { type: "start"; env: Record<string, string> }
  | { type: "proxy"; cellUrl: string; secret: string }
  | { type: "cpu" }
  | { type: "stop" };
export type ChildMessage =
  | { type: "ready"; url: string; internalUrl: string }
  | { type: "failed"; message: string }
  | { type: "cpu"; user: number; system: number };

let api: ApiApp | undefined;
let proxy: Server | undefined;
let stopping = false;

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await api?.close().catch(() => {});
  proxy?.closeAllConnections();
  proxy?.close();
  process.exit(0);
}

async function startCell(env: Record<string, string>): Promise<void> {
  const started = await startApi(env, () => {});
  api = started.api;
  if (started.internalUrl === undefined) throw new Error("the cell has no internal listener (PRIM_INTERNAL_SECRET?)");
  process.send?.({ type: "ready", url: started.url, internalUrl: started.internalUrl } satisfies ChildMessage);
}

type ForwardArgs = Parameters<typeof forwardRequest>;

/** What `forwardRequest` reads of Fastify's request and reply, over node:http's own objects. */
async function startProxy(cellUrl: string, secret: string): Promise<void> {
  let n = 0;
  const log = { warn: () => {} };
  const server = createServer((req, res) => {
    const request = { raw: req, id: `proxy-${n++}`, log } as unknown as ForwardArgs[0];
    const reply = { raw: res, hijack: () => {} } as unknown as ForwardArgs[1];
    forwardRequest(request, reply, { cellUrl, secret, clientIp: req.socket.remoteAddress ?? "" });
  });
  proxy = server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.send?.({ type: "ready", url: `http://127.0.0.1:${port}`, internalUrl: "" } satisfies ChildMessage);
}

serveParent({
  stop,
  onMessage: (raw) => {
    const message = raw as ParentMessage;
    const started =
      message.type === "start"
        ? startCell(message.env)
        : message.type === "proxy"
          ? startProxy(message.cellUrl, message.secret)
          : null;
    started?.catch((err: unknown) => {
      console.error("cells-server:", err);
      process.send?.({
        type: "failed",
        message: err instanceof Error ? err.message : String(err),
      } satisfies ChildMessage);
      void stop();
    });
  },
});
