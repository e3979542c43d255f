import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bearerToken } from "@prim/wire";
import { SMTPServer } from "smtp-server";
import { readMessage } from "./message.js";

/** A message the capture received. */
export interface CapturedMail {
  id: string;
  receivedAt: number;
  from: string;
  /** The envelope's recipients. */
  to: string[];
  subject: string;
  text: string;
  links: string[];
}

export interface MailCapture {
  /** Where to send (`SMTP_URL`): `smtp://127.0.0.1:<port>`. */
  smtpUrl: string;
  /** The viewer API: `GET <url>/messages` answers the messages, newest first. */
  url: string;
  messages(): CapturedMail[];
  /** The first message (oldest first) that `match` accepts, now or when it arrives. */
  waitFor(match: (mail: CapturedMail) => boolean, timeoutMs?: number): Promise<CapturedMail>;
  close(): Promise<void>;
}

export interface MailCaptureOptions {
  /** Loopback only unless told (it hands anyone its messages). */
  host?: string;
  smtpPort?: number;
  httpPort?: number;
  /** The viewer API then answers only `Authorization: Bearer <secret>`. */
  secret?: string;
  onMessage?: (mail: CapturedMail) => void;
}

/** Messages kept (the oldest go first). */
const KEEP = 500;
const MAX_BYTES = 1024 * 1024;

function listen(server: { listen(port: number, host: string, cb: () => void): unknown }, port: number, host: string) {
  return new Promise<void>((resolve) => server.listen(port, host, resolve));
}

function bearerMatches(header: string | undefined, secret: string): boolean {
  const token = bearerToken(header);
  if (token === undefined) return false;
  const given = Buffer.from(token);
  const wanted = Buffer.from(secret);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/**
 * A local SMTP server that keeps what it receives (development and tests: `npm run cloud`
 * without `SMTP_URL`), with a small JSON API for the dashboard's development mail page.
 * No TLS, no authentication: it listens on loopback.
 */
export async function startMailCapture(options: MailCaptureOptions = {}): Promise<MailCapture> {
  const host = options.host ?? "127.0.0.1";
  const kept: CapturedMail[] = [];
  const waiters = new Set<{ match: (mail: CapturedMail) => boolean; resolve: (mail: CapturedMail) => void }>();
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    size: MAX_BYTES,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) {
          callback(new Error("message too large"));
          return;
        }
        const mail: CapturedMail = {
          id: randomUUID(),
          receivedAt: Date.now(),
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          ...readMessage(Buffer.concat(chunks).toString("utf8")),
        };
        kept.push(mail);
        if (kept.length > KEEP) kept.shift();
        options.onMessage?.(mail);
        for (const waiter of waiters) {
          if (waiter.match(mail)) {
            waiters.delete(waiter);
            waiter.resolve(mail);
          }
        }
        callback();
      });
    },
  });
  smtp.on("error", () => {}); // a client's broken connection must not end the capture
  await listen(smtp, options.smtpPort ?? 0, host);
  const http: Server = createServer((req, res) => {
    if (options.secret !== undefined && !bearerMatches(req.headers.authorization, options.secret)) {
      res.writeHead(401).end();
      return;
    }
    if (req.method !== "GET" || req.url !== "/messages") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify([...kept].reverse()));
  });
  await listen(http, options.httpPort ?? 0, host);
  const port = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port;
  const smtpAddress = (smtp as unknown as { server: { address(): AddressInfo } }).server;
  return {
    smtpUrl: `smtp://${host}:${port(smtpAddress)}`,
    url: `http://${host}:${port(http)}`,
    messages: () => [...kept],
    waitFor(match, timeoutMs = 15_000) {
      const found = kept.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          match,
          resolve: (mail: CapturedMail) => {
            clearTimeout(timer);
            resolve(mail);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching mail within ${timeoutMs} ms (${kept.length} captured)`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async close() {
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
