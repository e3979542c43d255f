import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ERROR_STATUS, type ErrorCode, ServiceError } from "../../core/errors.js";
import { type HostReply, type HostRequest, STATEMENT_TIMEOUT_MS } from "./protocol.js";

// Under vitest the engine runs from its TypeScript sources; the child then runs through tsx.
const here = import.meta.url;
const childPath = fileURLToPath(new URL(here.endsWith(".ts") ? "./host-child.ts" : "./host-child.js", here));
const childExecArgv = here.endsWith(".ts") ? ["--import", "tsx"] : [];

interface Pending {
  id: number;
  req: HostRequest;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** A host reply's error as a ServiceError; unknown codes become a plain internal error. */
function hostError(code: string, message: string): ServiceError {
  const known = code in ERROR_STATUS ? (code as ErrorCode) : "internal_error";
  return new ServiceError(known, known === "internal_error" ? "internal error; safe to retry" : message);
}

/**
 * The engine's side of the SQL host process. Requests are pipelined and answered in order; the
 * oldest unanswered request is the one running, and only it is timed. When it overruns, the
 * process is killed (SQLite's WAL keeps every file intact), the request fails, and the ones
 * queued behind it — which had not started — are sent to a fresh process.
 */
export class SqlHost {
  private child: ChildProcess | null = null;
  private readonly pending: Pending[] = [];
  private nextId = 1;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly timeoutMs = STATEMENT_TIMEOUT_MS) {}

  request<T>(req: HostRequest): Promise<T> {
    if (this.closed) return Promise.reject(new ServiceError("internal_error", "internal error; safe to retry"));
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { id: this.nextId++, req, resolve: resolve as (v: unknown) => void, reject };
      this.pending.push(entry);
      this.post({ id: entry.id, req });
      if (this.pending.length === 1) this.armTimer();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    const child = this.child;
    this.child = null;
    if (child === null || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  }

  // Requests made in one turn of the event loop go to the host as one message.
  private outbox: { id: number; req: HostRequest }[] = [];

  private post(message: { id: number; req: HostRequest }): void {
    if (this.outbox.length === 0) setImmediate(() => this.flushOutbox());
    this.outbox.push(message);
  }

  private flushOutbox(): void {
    const batch = this.outbox;
    this.outbox = [];
    if (batch.length > 0 && this.child !== null) this.child.send(batch);
    else if (batch.length > 0) this.ensureChild().send(batch);
  }

  private ensureChild(): ChildProcess {
    if (this.child !== null) return this.child;
    const child = fork(childPath, [], {
      execArgv: childExecArgv,
      // JSON measured faster than the structured-clone serializer for these small messages;
      // every value crossing is JSON already (BLOBs travel as base64).
      serialization: "json",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    child.on("message", (replies: HostReply[]) => {
      for (const reply of replies) this.onReply(reply);
    });
    child.on("exit", () => this.onExit(child));
    child.unref();
    (child.channel as unknown as { unref?: () => void } | undefined)?.unref?.();
    this.child = child;
    return child;
  }

  private onReply(reply: HostReply): void {
    const head = this.pending[0];
    if (head === undefined || head.id !== reply.id) return; // a reply from before a restart
    this.pending.shift();
    this.clearTimer();
    if (this.pending.length > 0) this.armTimer();
    if (reply.ok) head.resolve(reply.value);
    else head.reject(hostError(reply.code, reply.message));
  }

  private armTimer(): void {
    this.timer = setTimeout(() => this.onTimeout(), this.timeoutMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private onTimeout(): void {
    const head = this.pending.shift();
    this.restart();
    head?.reject(
      new ServiceError("invalid_request", `the statement ran longer than ${this.timeoutMs} ms and was interrupted`),
    );
  }

  /** Kills the process and resends what was queued behind the request it was running. */
  private restart(): void {
    const old = this.child;
    this.child = null;
    old?.removeAllListeners("message");
    old?.kill("SIGKILL");
    this.outbox = [];
    if (this.pending.length === 0) return;
    this.ensureChild().send(this.pending.map((p) => ({ id: p.id, req: p.req })));
    this.armTimer();
  }

  private onExit(child: ChildProcess): void {
    if (child !== this.child) return; // killed on purpose
    this.child = null;
    this.clearTimer();
    // The process died on its own: the running request may have done anything; fail it.
    const head = this.pending.shift();
    head?.reject(new ServiceError("internal_error", "internal error; safe to retry"));
    if (this.pending.length > 0 && !this.closed) this.restart();
  }
}
