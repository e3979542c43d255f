import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { type Principal, ServiceError } from "@prim/wire";
import type { SessionTransport } from "./json-calls.js";

/**
 * Session caps. A session holds an MCP server with every tool's schema (~150 KB measured: 3,000
 * `initialize` calls kept 444 MB), so an uncapped table lets one credential exhaust the
 * engine's memory. 64 per credential covers many agents sharing a key; 512 in all bounds the
 * table at roughly 75 MB.
 */
export const MAX_SESSIONS_PER_CREDENTIAL = 64;
export const MAX_SESSIONS = 512;
/** Sessions unused this long are closed (a client that vanished without DELETE). */
export const SESSION_IDLE_MS = 30 * 60_000;

export interface SessionLimits {
  perCredential: number;
  total: number;
}

export interface Session {
  /** The SDK's transport: `initialize`, SSE answers, the GET event stream, DELETE. */
  transport: StreamableHTTPServerTransport;
  /** What the server is connected to: `transport`, plus the calls answered with plain JSON. */
  channel: SessionTransport;
  server: McpServer;
  /** The group path that started the session; the id answers 404 under any other. */
  group: string;
  /** The credential (principal actor) that started it; caps count per actor. */
  actor: string;
  /**
   * How far the credential reaches (`reachOf`): a narrower credential of the same actor (a key's
   * `pa_` token) presenting the session's id gets 404, not the session's wider principal.
   */
  reach: string;
  /** When a request last arrived or finished. */
  lastUsed: number;
  /**
   * POST/DELETE requests in flight. GET event streams do not count: an SDK client holds one open
   * for the session's whole life, and a session whose only activity is that stream is idle.
   */
  busy: number;
}

/**
 * The live sessions of one MCP endpoint, with the caps. Making room closes the least recently
 * used idle session first (of the same credential for the per-credential cap, of anyone for the
 * total); a closed session's id then answers 404 like any unknown session. A session is counted
 * from the moment it starts (before its id exists), so concurrent `initialize` calls cannot
 * overshoot the caps.
 */
export class SessionTable {
  private readonly byId = new Map<string, Session>();
  /** Every counted session, started or not yet initialized. */
  private readonly live = new Set<Session>();

  constructor(private readonly limits: SessionLimits) {}

  get(id: string): Session | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.live.size;
  }

  /**
   * Counts `session` in, first closing the oldest idle sessions over the caps. When only busy
   * sessions are left to close, the new one is refused (429 `rate_limited`) instead: closing a
   * session in the middle of a call would fail that call.
   */
  admit(session: Session): void {
    const mine = (s: Session) => s.actor === session.actor;
    this.makeRoom(mine, this.limits.perCredential, "this credential");
    this.makeRoom(() => true, this.limits.total, "this engine");
    this.live.add(session);
  }

  /** The transport assigned the session its id. */
  initialized(id: string, session: Session): void {
    if (this.live.has(session)) this.byId.set(id, session);
  }

  /** The session closed (DELETE, eviction, idle sweep) or never initialized. */
  remove(session: Session): void {
    this.live.delete(session);
    const id = session.transport.sessionId;
    if (id !== undefined && this.byId.get(id) === session) this.byId.delete(id);
  }

  /** Closes sessions unused since `cutoff`. */
  sweep(cutoff: number): void {
    for (const session of [...this.live]) if (session.busy === 0 && session.lastUsed < cutoff) this.close(session);
  }

  closeAll(): Promise<unknown> {
    return Promise.allSettled([...this.live].map((s) => this.close(s)));
  }

  private makeRoom(counted: (s: Session) => boolean, cap: number, whose: string): void {
    let sessions = [...this.live].filter(counted);
    while (sessions.length >= cap) {
      const idle = sessions.filter((s) => s.busy === 0);
      if (idle.length === 0) {
        throw new ServiceError(
          "rate_limited",
          `${whose} has ${sessions.length} MCP sessions, all busy (the limit is ${cap}); retry shortly or end a session with DELETE`,
          { headers: { "retry-after": "1" } },
        );
      }
      const oldest = idle.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a));
      void this.close(oldest);
      sessions = sessions.filter((s) => s !== oldest);
    }
  }

  private close(session: Session): Promise<void> {
    this.remove(session); // at once: its id answers 404 from now on
    return session.transport.close();
  }
}

/**
 * A principal's reach, compared when a session id is presented: kind, group, tools, narrowings,
 * read-only, and whether it is a `pa_` token (which may not manage keys: it never uses a key's session).
 */
export function reachOf(p: Principal): string {
  return JSON.stringify([p.kind, p.groupId, p.tools, p.narrowed ?? null, p.readOnly === true, p.attenuated === true]);
}
