import { randomUUID } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import {
  type Engine,
  type GroupRecord,
  invalid,
  isValidName,
  narrowTools,
  notFound,
  type Principal,
  ServiceError,
} from "@prim/engine";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { createMcpServer } from "./server.js";

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  /** The group path that started the session; the id answers 404 under any other. */
  group: string;
  lastUsed: number;
}

/** Sessions unused this long are closed (a client that vanished without DELETE). */
const IDLE_MS = 30 * 60_000;

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}

/** `tools=kv_*,db_query` → patterns; absent or empty → no narrowing. */
function toolPatterns(query: unknown): string[] | null {
  const raw = (query as Record<string, unknown>).tools;
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

/** The group a path names, created on first use by a caller that may create groups. */
async function groupFor(engine: Engine, principal: Principal, name: string): Promise<GroupRecord> {
  if (!isValidName(name)) {
    throw invalid("group: the MCP path names a group: 1-63 characters of a-z, 0-9, '-', '_', '.'");
  }
  const existing = await engine.services.catalog.getGroup(name);
  if (existing !== null) {
    if (principal.groupId !== null && existing.id !== principal.groupId) {
      throw new ServiceError("group_mismatch", `group '${name}' is outside this credential's scope`);
    }
    return existing;
  }
  await engine.invoke(principal, "group.create", null, { name });
  return (await engine.services.catalog.getGroup(name)) as GroupRecord;
}

/**
 * Mounts the MCP endpoint at `/mcp/<group>` (Streamable HTTP: POST, GET for the event stream,
 * DELETE to end a session). Authentication is the server's own `onRequest` hook, as for REST.
 */
export function mountMcp(app: FastifyInstance, engine: Engine): void {
  const sessions = new Map<string, Session>();
  const sweep = setInterval(() => {
    const cutoff = Date.now() - IDLE_MS;
    for (const session of sessions.values()) if (session.lastUsed < cutoff) void session.transport.close();
  }, 60_000);
  sweep.unref();
  app.addHook("onClose", async () => {
    clearInterval(sweep);
    await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
  });

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const group = (req.params as { group: string }).group;
    const sessionId = req.headers["mcp-session-id"];
    let session: Session | undefined;
    if (typeof sessionId === "string") {
      session = sessions.get(sessionId);
      if (session === undefined || session.group !== group) throw notFound(`MCP session '${sessionId}'`);
    } else if (req.method === "POST" && isInitialize(req.body)) {
      session = await startSession(req, group);
    } else {
      throw invalid("mcp-session-id: required (start a session with an initialize request)");
    }
    session.lastUsed = Date.now();
    reply.hijack();
    reply.raw.setHeader("x-request-id", req.id);
    await session.transport.handleRequest(req.raw, reply.raw, req.body);
  };

  const startSession = async (req: FastifyRequest, groupName: string): Promise<Session> => {
    const patterns = toolPatterns(req.query);
    const principal = patterns === null ? req.principal : narrowTools(req.principal, patterns);
    const group = await groupFor(engine, req.principal, groupName);
    const server = createMcpServer({ engine, principal, group, baseUrl: `${req.protocol}://${req.headers.host}` });
    const session = { server, group: groupName, lastUsed: Date.now() } as Session;
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    session.transport.onclose = () => {
      if (session.transport.sessionId !== undefined) sessions.delete(session.transport.sessionId);
    };
    await server.connect(session.transport);
    return session;
  };

  app.route({ method: ["POST", "GET", "DELETE"], url: "/mcp/:group", handler });
}
