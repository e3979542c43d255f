import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";
import { ERROR_STATUS, type ErrorCode, ServiceError } from "@prim/wire";
import { childArgs, entryModule } from "../core/entry-module.js";
import { lazyJson } from "../core/raw-json.js";
import { encodeFrame, type Frame, FrameReader, READY_FRAME_ID } from "./frames.js";
import { type HostRequest, STATEMENT_TIMEOUT_MS } from "./protocol.js";

const CHILD = entryModule(import.meta.url, "host-child");

interface Pending {
  id: number;
  req: HostRequest;
  /** The request as JSON, made before it was queued (a restart resends it as is). */
  text: string;
  /** How long it may run: the host's statement limit, plus any allowance it was given. */
  limitMs: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** A host reply's error as a ServiceError; unknown codes become a plain internal error. */
function hostError(code: string, message: string): ServiceError {
  const known = code in ERROR_STATUS ? (code as ErrorCode) : "internal_error";
  return new ServiceError(known, known === "internal_error" ? "internal error; safe to retry" : message);
}

/** A request as JSON text, or the 400 a request that cannot be serialised answers. */
function serialise(req: HostRequest): string | ServiceError {
  try {
    return JSON.stringify(req);
  } catch (err) {
    const reason = err instanceof RangeError ? "it is nested too deeply" : "it holds a value JSON cannot carry";
    return new ServiceError("invalid_request", `the statement's parameters cannot be sent to the SQL host: ${reason}`);
  }
}

/**
 * The engine's side of one SQL host process (pool.ts pools several). Requests are
 * pipelined and answered in order; the
 * oldest unanswered request is the one running, and only it is timed. When it overruns, the
 * process is killed (SQLite's WAL keeps every file intact), the request fails, and the ones
 * queued behind it — which had not started — are sent to a fresh process.
 */
export class SqlHostProcess {
  private child: ChildProcess | null = null;
  private channel: Socket | null = null;
  private readonly pending: Pending[] = [];
  private nextId = 1;
  private timer: NodeJS.Timeout | null = null;
  /**
   * Whether the running process has said it is ready. The head request is timed from then
   * on: the limit is on statements, and starting a process on a loaded machine can take
   * seconds that are no statement's fault.
   */
  private ready = false;
  private closed = false;

  constructor(private readonly timeoutMs = STATEMENT_TIMEOUT_MS) {}

  /**
   * Sends `req`. `extraMs` lengthens its time limit (a file's check gets time for its size);
   * every other request runs under the statement limit alone.
   */
  request<T>(req: HostRequest, extraMs = 0): Promise<T> {
    if (this.closed) return Promise.reject(new ServiceError("internal_error", "internal error; safe to retry"));
    // Serialised before anything is queued: the channel pairs replies with requests by order,
    // so an entry that was never sent would take the next reply and desynchronise every later
    // one. Whatever the input (nested too deep, a BigInt, a cycle), it fails here on its own.
    const text = serialise(req);
    if (text instanceof ServiceError) return Promise.reject(text);
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = {
        id: this.nextId++,
        req,
        text,
        limitMs: this.timeoutMs + Math.max(0, extraMs),
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      this.pending.push(entry);
      this.post(entry);
      if (this.pending.length === 1) this.armTimer();
    });
  }

  /** Requests sent and not answered yet (the pool routes to the host with the fewest). */
  get load(): number {
    return this.pending.length;
  }

  /** Whether a process is running (one that is not holds no connection to any file). */
  get running(): boolean {
    return this.child !== null;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    this.outbox = [];
    for (const p of this.pending.splice(0))
      p.reject(new ServiceError("internal_error", "internal error; safe to retry"));
    const child = this.child;
    this.child = null;
    this.ready = false;
    this.channel?.destroy();
    this.channel = null;
    // A host killed by a signal has `signalCode` set and `exitCode` null.
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  }

  // Requests made in one turn of the event loop go to the host in one write.
  private outbox: Buffer[] = [];

  private post(entry: Pending): void {
    if (this.outbox.length === 0) setImmediate(() => this.flushOutbox());
    this.outbox.push(encodeFrame(entry.id, 0, entry.text));
  }

  private flushOutbox(): void {
    const frames = this.outbox;
    this.outbox = [];
    if (frames.length > 0)
      this.ensureChannel().write(frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames));
  }

  /** The host process and its socket pair (fd 3), started on first use. */
  private ensureChannel(): Socket {
    if (this.channel !== null) return this.channel;
    const child = spawn(process.execPath, childArgs(CHILD), {
      stdio: ["ignore", "inherit", "inherit", "pipe"],
    });
    const channel = child.stdio[3] as Socket;
    const reader = new FrameReader();
    channel.on("data", (chunk: Buffer) => reader.push(chunk, (frame) => this.onReply(child, frame)));
    channel.on("error", () => {}); // the exit handler deals with a dead host
    child.on("exit", (_code, signal) => this.onExit(child, signal));
    child.on("error", () => this.onExit(child, null)); // could not start: fail the head, retry the rest
    child.unref();
    channel.unref();
    this.child = child;
    this.channel = channel;
    this.ready = false;
    return channel;
  }

  private onReply(child: ChildProcess, frame: Frame): void {
    if (frame.id === READY_FRAME_ID) {
      if (child !== this.child) return;
      this.ready = true;
      if (this.pending.length > 0) this.armTimer();
      return;
    }
    const head = this.pending[0];
    // A reply from a host that was replaced, or for a request that already failed.
    if (child !== this.child || head === undefined || head.id !== frame.id) return;
    this.pending.shift();
    this.clearTimer();
    if (this.pending.length > 0) this.armTimer();
    if (frame.status === 1) {
      const { code, message } = JSON.parse(frame.text) as { code: string; message: string };
      head.reject(hostError(code, message));
      return;
    }
    // A statement's result crosses as the JSON text of the response body: REST sends it as is,
    // and only a caller that reads its fields pays for parsing it.
    if (head.req.kind === "exec") {
      head.req.wrote = frame.status === 2;
      head.resolve(lazyJson(frame.text));
    } else head.resolve(JSON.parse(frame.text));
  }

  private armTimer(): void {
    if (!this.ready) return; // armed when the process says it is ready
    this.clearTimer();
    this.timer = setTimeout(() => this.onTimeout(), this.pending[0]?.limitMs ?? this.timeoutMs);
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
      new ServiceError(
        "invalid_request",
        `the statement ran longer than ${head?.limitMs ?? this.timeoutMs} ms and was interrupted`,
      ),
    );
  }

  /** Kills the process and resends what was queued behind the request it was running. */
  private restart(): void {
    const old = this.child;
    this.child = null;
    this.ready = false;
    this.channel?.destroy();
    this.channel = null;
    old?.kill("SIGKILL");
    this.outbox = [];
    if (this.pending.length === 0) return;
    const frames = this.pending.map((p) => encodeFrame(p.id, 0, p.text));
    this.ensureChannel().write(Buffer.concat(frames));
    this.armTimer();
  }

  /**
   * The process ended without being asked to. A signal to the engine's whole process group (a
   * terminal's Ctrl-C, a supervisor's `kill -TERM -<pgid>`) reaches the host first, often while
   * the engine is closing its dbs: a `close` it was running is then done, not failed — a process
   * that is gone holds no connection. Anything else it was running may have done anything, so
   * it fails (safe to retry), and what was queued behind it goes to a fresh process.
   */
  private onExit(child: ChildProcess, signal: NodeJS.Signals | null): void {
    if (child !== this.child) return; // killed on purpose
    this.child = null;
    this.ready = false;
    this.channel?.destroy();
    this.channel = null;
    this.clearTimer();
    const head = this.pending.shift();
    // Only the head is settled here: a `close` queued behind it may follow a request of its db
    // that the fresh process runs first, so it goes there too, to keep each db's order.
    if (head?.req.kind === "close") head.resolve({ closed: true });
    else if (head !== undefined) {
      const stopped = signal === "SIGTERM" || signal === "SIGINT";
      head.reject(
        new ServiceError(
          "internal_error",
          stopped ? "internal error: the SQL host was stopped; safe to retry" : "internal error; safe to retry",
        ),
      );
    }
    if (this.pending.length > 0 && !this.closed) this.restart();
  }
}
