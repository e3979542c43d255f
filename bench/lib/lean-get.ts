// A GET client for large bodies that costs the load generator little: keep-alive HTTP/1.1
// over net sockets that read into one reused buffer per connection (`onread`), counting and
// discarding the body. node:http hands every socket read to JS in a freshly allocated buffer;
// at 16 MiB per response the allocation and page faults cost the client more CPU than the
// server spends sending, and on a 2-core machine that comes out of the server's share.
// Only responses with a Content-Length are understood; anything else is a failure.
import { connect, type Socket } from "node:net";

const READ_BUFFER_BYTES = 1024 * 1024;
const MAX_HEAD_BYTES = 64 * 1024;

interface Connection {
  socket: Socket;
  buffer: Buffer;
  /** The request in flight sets these; idle connections ignore reads and ends. */
  handlers: { onRead: (n: number) => void; onEnd: (err: Error) => void };
}

const ignore = () => {};

/** The connection ended before any byte of the response: a kept-alive connection the server
 * had just closed, so the request may be retried on a new one. */
class ClosedBeforeResponse extends Error {}

function openConnection(host: string, port: number): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const handlers = { onRead: ignore as (n: number) => void, onEnd: ignore as (err: Error) => void };
    const callback = (n: number) => {
      handlers.onRead(n);
      return true;
    };
    const socket = connect({ host, port, onread: { buffer, callback } });
    socket.once("connect", () => resolve({ socket, buffer, handlers }));
    socket.on("error", (err) => {
      reject(err);
      handlers.onEnd(err);
    });
    socket.on("close", () => handlers.onEnd(new Error("connection closed mid-response")));
  });
}

/** One GET on an idle connection: resolves with the body's length, rejects on a non-2xx status. */
function exchange(conn: Connection, host: string, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let head = "";
    let status = 0;
    let length = -1;
    let received = 0;
    const finish = (err: Error | null) => {
      conn.handlers.onRead = ignore;
      conn.handlers.onEnd = ignore;
      if (err !== null) reject(err);
      else if (status < 200 || status >= 300) reject(new Error(`GET ${path} → ${status}`));
      else resolve(received);
    };
    conn.handlers.onEnd = (err) => finish(head === "" ? new ClosedBeforeResponse(err.message) : err);
    conn.handlers.onRead = (n) => {
      let bodyBytes = n;
      if (length < 0) {
        head += conn.buffer.toString("latin1", 0, n);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) {
          if (head.length > MAX_HEAD_BYTES) finish(new Error(`GET ${path}: response head too long`));
          return;
        }
        const lines = head.slice(0, end).toLowerCase();
        const match = /\r\ncontent-length: *(\d+)/.exec(lines);
        if (match === null || lines.includes("\r\ntransfer-encoding:")) {
          finish(new Error(`GET ${path}: response without Content-Length`));
          return;
        }
        status = Number(lines.slice(9, 12));
        length = Number(match[1]);
        bodyBytes = head.length - end - 4; // the body bytes that came with the head, all in this read
      }
      received += bodyBytes;
      if (received > length) finish(new Error(`GET ${path}: more bytes than Content-Length ${length}`));
      else if (received === length) finish(null);
    };
    conn.socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
  });
}

export function leanGetClient(host: string, port: number) {
  const idle: Connection[] = [];
  const opened: Connection[] = [];
  /** GETs `path`, discarding the body; `expected` bytes or it counts as a failure. */
  const get = async (path: string, expected: number): Promise<number> => {
    let conn = idle.pop();
    while (conn?.socket.destroyed) conn = idle.pop();
    const reused = conn !== undefined;
    if (conn === undefined) {
      conn = await openConnection(host, port);
      opened.push(conn);
    }
    try {
      const received = await exchange(conn, host, port, path);
      if (received !== expected) throw new Error(`GET ${path}: ${received} bytes, expected ${expected}`);
      idle.push(conn);
      return received;
    } catch (err) {
      conn.socket.destroy();
      if (reused && err instanceof ClosedBeforeResponse) return get(path, expected);
      throw err;
    }
  };
  const close = () => {
    for (const conn of opened) conn.socket.destroy();
  };
  return { get, close };
}
