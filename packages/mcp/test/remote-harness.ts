// The remote half of the MCP test runs: a real engine in a child process (remote-engine.ts,
// TypeScript sources under tsx with `@prim/*` resolved to sources, as the CLI tests do), and in
// this process an MCP-only HTTP app whose tools reach data through a `RemoteInvoker`. One such
// pair serves all the tests of a file, each test on a fresh tenant (helpers.ts).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_PRINCIPAL, type Principal, ServiceError, toServiceError } from "@prim/engine";
import { JSON_BODY_LIMIT, mountSecretRequestPage } from "@prim/http";
import { RemoteInvoker } from "@prim/wire/invoke";
import Fastify, { type FastifyInstance } from "fastify";
import { mountMcp } from "../src/index.js";

// Node arguments that run a TypeScript entry with `@prim/*` resolved to sources (scripts/source-hooks.mjs).
const FROM_SOURCES = [
  "--import",
  "tsx",
  "--import",
  fileURLToPath(new URL("../../../scripts/register-source-hooks.mjs", import.meta.url)),
];
const ENGINE_ENTRY = fileURLToPath(new URL("./remote-engine.ts", import.meta.url));

/** An engine process and this process's MCP app in front of it, for the tests of a file. */
export interface RemoteHost {
  url: string;
  invoker: RemoteInvoker;
  /** A test's tenant is open: another server in the same test needs a host of its own. */
  readonly busy: boolean;
  /** Opens a fresh tenant in the engine process, on a new directory; answers the directory. */
  open(): Promise<string>;
  /** Closes the open tenant and removes its directory. */
  release(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the engine process over a fresh directory (remote-engine.ts: one cell, a tenant per
 * test) and an MCP-only app on a free loopback port whose tools reach it through a RemoteInvoker.
 */
export async function openRemoteHost(options: { allowLoopbackFetch?: boolean } = {}): Promise<RemoteHost> {
  const dir = mkdtempSync(join(tmpdir(), "prim-mcp-remote-"));
  const secret = randomBytes(32).toString("hex");
  const child = spawn(process.execPath, [...FROM_SOURCES, ENGINE_ENTRY, dir, options.allowLoopbackFetch ? "1" : "0"], {
    env: { ...process.env, PRIM_INTERNAL_SECRET: secret },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  /** The engine process's answers to commands, in order. */
  const answers: ((line: string) => void)[] = [];
  let partial = "";
  child.stdout.on("data", (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (/^(opened|released|failed )/.test(line)) answers.shift()?.(line);
  });
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      for (const answer of answers.splice(0)) answer(`failed engine process exited: ${output.slice(-500)}`);
      resolve();
    }),
  );
  const stop = async () => {
    child.kill("SIGTERM");
    await exited;
  };
  const internalUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1] as string);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, signal) => reject(new Error(`engine process exited (${code ?? signal}): ${output}`)));
  }).catch(async (err) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const command = (line: string) =>
    new Promise<void>((resolve, reject) => {
      answers.push((answer) => (answer.startsWith("failed ") ? reject(new Error(answer)) : resolve()));
      child.stdin.write(`${line}\n`);
    });
  const invoker = new RemoteInvoker({ url: internalUrl, secret });
  const app = mcpOnlyApp();
  mountMcp(app, invoker);
  mountSecretRequestPage(app, invoker);
  try {
    await app.listen({ port: 0, host: "127.0.0.1" });
  } catch (err) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  let count = 0;
  let current: string | undefined;
  const release = async () => {
    if (current === undefined) return;
    const tenantDir = current;
    current = undefined;
    await command("release");
    rmSync(tenantDir, { recursive: true, force: true });
  };
  return {
    url,
    invoker,
    get busy() {
      return current !== undefined;
    },
    async open() {
      if (current !== undefined) throw new Error("this engine process already serves a test");
      const tenantDir = join(dir, `t${++count}`);
      current = tenantDir;
      await command(`open ${tenantDir}`);
      return tenantDir;
    },
    release,
    async close() {
      await release();
      await app.close();
      await stop();
      rmSync(dir, { recursive: true, force: true });
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
