// Child process for bench/kv.ts: the real local engine plus a bare Fastify server that serves
// the same response bytes, so the load generator (parent) and the servers do not share a core.
// Protocol over IPC:
//   child → parent  { type: "ready", enginePort, noLogPort, barePort, dataDir }
//                   (noLogPort: a second local engine started with its change logs off, the
//                   baseline of what recording each write's change costs; issue 42)
//   parent → child  { type: "bodies", get, put }   child → parent { type: "bodies-set" }
//   parent → child  { type: "cpu" }                child → parent { type: "cpu", user, system }  (µs)
//   parent → child  { type: "syncs" }              child → parent { type: "syncs", fsyncs, writes }
//                   (the engine's durable-write counters: fsync rounds, calls answered after one)
//   parent → child  { type: "stop" }               child closes both servers and exits
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDevServer } from "@prim/cli";
import Fastify from "fastify";
import { serveParent } from "./lib/serve-parent.js";

export type ParentMessage =
  | { type: "bodies"; get: string; put: string }
  | { type: "cpu" }
  | { type: "syncs" }
  | { type: "stop" };

export type ChildMessage =
  | { type: "ready"; enginePort: number; noLogPort: number; barePort: number; dataDir: string }
  | { type: "bodies-set" }
  | { type: "cpu"; user: number; system: number }
  | { type: "syncs"; fsyncs: number; writes: number };

const HOST = "127.0.0.1";

function send(message: ChildMessage): void {
  if (process.send === undefined) throw new Error("kv-server.ts must be started with an IPC channel (fork)");
  process.send(message);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-bench-kv-"));
  const engine = await startDevServer({ port: 0, host: HOST, dataDir });
  const noLogDir = mkdtempSync(join(tmpdir(), "prim-bench-kv-nolog-"));
  const noLog = await startDevServer({ port: 0, host: HOST, dataDir: noLogDir, changeLog: { enabled: false } });

  // Bodies are captured from real kv responses by the parent after seeding; until then, placeholders.
  let getBody = "{}";
  let putBody = "{}";
  const bare = Fastify({ logger: false });
  bare.get("/bare", (_req, reply) => {
    reply.type("application/json").send(getBody);
  });
  bare.put("/bare", (req, reply) => {
    // Fastify's built-in JSON parser has already parsed the body; touch it like a handler would.
    const body = req.body as { value?: unknown } | null;
    if (body === null || typeof body !== "object" || typeof body.value !== "string") {
      reply.code(400).send({ error: "expected { value: string }" });
      return;
    }
    reply.type("application/json").send(putBody);
  });
  // POST ceiling for benchmarks whose routes take a JSON body (db): parse it, answer the
  // captured "put" bytes.
  bare.post("/bare", (req, reply) => {
    if (req.body === null || typeof req.body !== "object") {
      reply.code(400).send({ error: "expected a JSON object" });
      return;
    }
    reply.type("application/json").send(putBody);
  });
  await bare.listen({ port: 0, host: HOST });
  const address = bare.server.address();
  const barePort = typeof address === "object" && address !== null ? address.port : 0;

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await Promise.allSettled([bare.close(), engine.close(), noLog.close()]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(noLogDir, { recursive: true, force: true });
    process.exit(0);
  };

  serveParent({
    stop,
    onMessage: (message) => {
      if (message.type === "syncs") {
        const { fsyncs, writes } = engine.engine.services.syncs;
        send({ type: "syncs", fsyncs, writes });
        return;
      }
      const bodies = message as Extract<ParentMessage, { type: "bodies" }>;
      if (bodies.type !== "bodies") return;
      getBody = bodies.get;
      putBody = bodies.put;
      send({ type: "bodies-set" });
    },
  });

  send({ type: "ready", enginePort: engine.port, noLogPort: noLog.port, barePort, dataDir });
}

main().catch((err: unknown) => {
  console.error("kv-server:", err);
  process.exit(1);
});
