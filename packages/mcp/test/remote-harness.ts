// The remote half of the MCP test runs: a real engine in a child process (remote-engine.ts,
// TypeScript sources under tsx with `@prim/*` resolved to sources, as the CLI tests do), and in
// this process an MCP-only HTTP app whose tools reach data through a `RemoteInvoker`.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { LOCAL_PRINCIPAL, type LocalEngineOptions, type Principal, ServiceError, toServiceError } from "@prim/engine";
import { JSON_BODY_LIMIT } from "@prim/http";
import { RemoteInvoker } from "@prim/wire/invoke";
import Fastify, { type FastifyInstance } from "fastify";

// Node arguments that run a TypeScript entry with `@prim/*` resolved to sources (scripts/source-hooks.mjs).
const FROM_SOURCES = [
  "--import",
  "tsx",
  "--import",
  fileURLToPath(new URL("../../../scripts/register-source-hooks.mjs", import.meta.url)),
];
const ENGINE_ENTRY = fileURLToPath(new URL("./remote-engine.ts", import.meta.url));

/** Starts the engine process over `dataDir`; answers the invoker and this process's MCP app. */
export async function startRemoteEngine(
  dataDir: string,
  options: { rootToken?: string; engine?: Partial<LocalEngineOptions> },
): Promise<{ invoker: RemoteInvoker; app: FastifyInstance; stop: () => Promise<void> }> {
  if (options.rootToken !== undefined) throw new Error("remote runs serve tokenless localhost only");
  const secret = randomBytes(32).toString("hex");
  const child = spawn(
    process.execPath,
    [...FROM_SOURCES, ENGINE_ENTRY, dataDir, options.engine?.allowLoopbackFetch ? "1" : "0"],
    { env: { ...process.env, PRIM_INTERNAL_SECRET: secret }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1] as string);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, signal) => reject(new Error(`engine process exited (${code ?? signal}): ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    invoker: new RemoteInvoker({ url, secret }),
    app: mcpOnlyApp(),
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * An HTTP app with only what `mountMcp` expects of its host: a principal on each request (the
 * tokenless local one), request ids, and errors in the spec's shape with `X-Request-Id`.
 */
function mcpOnlyApp(): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: JSON_BODY_LIMIT });
  app.decorateRequest("principal", null as unknown as Principal);
  app.addHook("onRequest", async (req, reply) => {
    req.principal = LOCAL_PRINCIPAL;
    reply.header("x-request-id", req.id);
  });
  app.setErrorHandler((err, req, reply) => {
    const statusCode = (err as { statusCode?: number }).statusCode;
    const error =
      err instanceof ServiceError || statusCode === undefined || statusCode >= 500
        ? toServiceError(err)
        : new ServiceError("invalid_request", "the request is not valid");
    void reply
      .code(error.status)
      .header("x-request-id", req.id)
      .send({ error: { code: error.code, message: error.message } });
  });
  return app;
}
