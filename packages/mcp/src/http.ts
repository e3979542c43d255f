import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import {
  type ChangeSource,
  type Invoker,
  invalid,
  isValidName,
  type Manifest,
  narrowTools,
  notFound,
  openGroup,
  type Principal,
  ServiceError,
} from "@prim/wire";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { jsonCallOf, SessionTransport } from "./json-calls.js";
import { createMcpServer, type McpServerOptions } from "./server.js";
import {
  MAX_SESSIONS,
  MAX_SESSIONS_PER_CREDENTIAL,
  reachOf,
  SESSION_IDLE_MS,
  type Session,
  type SessionLimits,
  SessionTable,
} from "./sessions.js";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}

/**
 * `tools=kv_*,db_query` (HTTP query) or `--tools` (stdio CLI) → patterns; absent or empty → no
 * narrowing. The one parser of tool patterns for every MCP entry point.
 */
export function parseToolPatterns(raw: unknown): string[] | null {
  if (raw === undefined) return null;
  const text = Array.isArray(raw) ? raw.join(",") : String(raw);
  const patterns = text
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  if (patterns.some((t) => !/^[a-z_*]+$/.test(t)))
    throw invalid("tools: comma-separated tool names or patterns like kv_*");
  return patterns.length === 0 ? null : patterns;
}

const isInitialize = (body: unknown) =>
  Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);

/**
 * The group a path (or header) names, created on first use by a caller that may create groups
 * (spec); a one-group credential's own group by its id.
 */
async function groupFor(invoker: Invoker, principal: Principal, name: string): Promise<Manifest> {
  if (principal.groupId !== null) {
    if (name === principal.groupId) {
      const own = await invoker.invoke<Manifest>(principal, "group.get", name, {});
      return { id: own.id, namespace: own.namespace, name: own.name, created_at: own.created_at };
    }
    // A one-group credential creates no group: a name that is not its group is outside its scope.
    const found = isValidName(name)
      ? await invoker.invoke<Manifest | null>(principal, "group.find", null, { name })
      : null;
    if (found === null) throw new ServiceError("group_mismatch", `group '${name}' is outside this credential's scope`);
    return found;
  }
  // Checked here too for the message: the path, not a body field, named the group.
  if (!isValidName(name)) {
    throw invalid("group: the MCP path names a group: 1-63 characters of a-z, 0-9, '-', '_', '.'");
  }
  return openGroup(invoker, principal, name);
}

export interface McpMountOptions extends Partial<SessionLimits> {
  /** Where to serve (default `/mcp/:group`, the group from the path). */
  url?: string;
  /** The group a request addresses (default: the path's `:group`); throws to refuse. */
  groupOf?: (req: FastifyRequest) => string;
  /** Change notices for resource subscriptions (the engine's feed, or the cloud's Redis one). */
  changes?: ChangeSource;
  /** Where a person answers a secret request (apps/mcp: the dashboard); default the engine's own page. */
  secretRequestUrl?: McpServerOptions["secretRequestUrl"];
  /** Minted keys (apps/mcp): serves the key tools (`key_mint`, `key_list`, `key_revoke`); absent, they do not exist. */
  keys?: McpServerOptions["keys"];
}

const groupFromPath = (req: FastifyRequest) => (req.params as { group: string }).group;

/**
 * Mounts the MCP endpoint at `/mcp/<group>` (Streamable HTTP: POST, GET for the event stream,
 * DELETE to end a session), or at `url` with the group from `groupOf` (the cloud's `/mcp` and
 * its group selection rules). Authentication is the server's own `onRequest` hook, as for REST.
 * A session belongs to the credential and the group that started it: its id answers 404 to
 * anyone else. Sessions are capped per credential and in total (`sessions.ts`); tests pass
 * smaller caps.
 */
export function mountMcp(app: FastifyInstance, invoker: Invoker, options: McpMountOptions = {}): void {
  const limits = options;
  const groupOf = options.groupOf ?? groupFromPath;
  const sessions = new SessionTable({
    perCredential: limits.perCredential ?? MAX_SESSIONS_PER_CREDENTIAL,
    total: limits.total ?? MAX_SESSIONS,
  });
  const sweep = setInterval(() => sessions.sweep(Date.now() - SESSION_IDLE_MS), 60_000);
  sweep.unref();
  app.addHook("onClose", async () => {
    clearInterval(sweep);
    await sessions.closeAll();
  });

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const group = groupOf(req);
    const sessionId = req.headers["mcp-session-id"];
    let session: Session | undefined;
    if (typeof sessionId === "string") {
      session = sessions.get(sessionId);
      if (
        session === undefined ||
        session.group !== group ||
        session.actor !== req.principal.actor ||
        session.reach !== reachOf(req.principal)
      ) {
        throw notFound(`MCP session '${sessionId}'`);
      }
    } else if (req.method === "POST" && isInitialize(req.body)) {
      session = await startSession(req, group);
    } else {
      throw invalid("mcp-session-id: required (start a session with an initialize request)");
    }
    const current = session;
    current.lastUsed = Date.now();
    if (req.method !== "GET") {
      // Busy until the answer is written: a session mid-call is never closed to make room.
      current.busy++;
      reply.raw.once("close", () => {
        current.busy--;
        current.lastUsed = Date.now();
        if (current.transport.sessionId === undefined) sessions.remove(current); // initialize failed
      });
    }
    reply.hijack();
    reply.raw.setHeader("x-request-id", req.id);
    // A call that needs no stream is answered with plain JSON, past the SDK's Web conversion.
    const call = req.method === "POST" && sessionId !== undefined ? jsonCallOf(req.raw, req.body) : undefined;
    if (call !== undefined) current.channel.answerJson(call, req.raw, reply.raw);
    else await current.transport.handleRequest(req.raw, reply.raw, req.body);
  };

  const startSession = async (req: FastifyRequest, groupName: string): Promise<Session> => {
    const patterns = parseToolPatterns((req.query as Record<string, unknown>).tools);
    const principal = patterns === null ? req.principal : narrowTools(req.principal, patterns);
    const group = await groupFor(invoker, req.principal, groupName);
    const server = createMcpServer({
      invoker,
      principal,
      group,
      baseUrl: `${req.protocol}://${req.headers.host}`,
      changes: options.changes,
      ...(options.secretRequestUrl === undefined ? {} : { secretRequestUrl: options.secretRequestUrl }),
      ...(options.keys === undefined ? {} : { keys: options.keys }),
    });
    const session = {
      server,
      group: groupName,
      actor: req.principal.actor,
      reach: reachOf(req.principal),
      lastUsed: Date.now(),
      busy: 0,
    } as Session;
    sessions.admit(session);
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.initialized(id, session),
      onsessionclosed: () => sessions.remove(session),
    });
    session.transport.onclose = () => sessions.remove(session);
    session.channel = new SessionTransport(session.transport);
    try {
      await server.connect(session.channel);
    } catch (err) {
      sessions.remove(session);
      throw err;
    }
    return session;
  };

  app.route({ method: ["POST", "GET", "DELETE"], url: options.url ?? "/mcp/:group", handler });
}
