// The built dashboard under its own server (server.mjs), for tests that speak HTTP to it: a
// fresh migrated database, the local mail capture as its SMTP_URL, raw requests that can pick
// their socket's source address (127.0.0.2 is another client on loopback), and sign-up
// through the real mail path (the link in the captured message, followed like a browser).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { migrate } from "@prim/db";
import { type MailCapture, startMailCapture } from "@prim/mail";
import { freshDatabase } from "@prim/testkit";
import { freePort } from "@prim/testkit/cloud";
import pg from "pg";

const WEB_DIR = fileURLToPath(new URL("..", import.meta.url));
const SERVER = join(WEB_DIR, "server.mjs");

export interface WebServer {
  url: string;
  stop(): Promise<void>;
}

async function waitFor(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The built dashboard (server.mjs) on a loopback port (a free one unless given) with `env`. */
export async function startWebServer(env: Record<string, string>, chosenPort?: number): Promise<WebServer> {
  if (!existsSync(join(WEB_DIR, ".next", "BUILD_ID"))) {
    throw new Error("apps/web is not built: run `npm run build` (npm test does it first)");
  }
  const port = chosenPort ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, [SERVER, "-p", String(port), "-H", "127.0.0.1"], {
    cwd: WEB_DIR,
    detached: true, // its own process group, stopped as one
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", PRIM_DASHBOARD_URL: url, ...env },
  });
  await waitFor(`${url}/api/auth/ok`, 60_000);
  return {
    url,
    stop: async () => {
      if (child.pid === undefined || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        return;
      }
      // A server that outlives its grace (5 s) is killed: a stray one holds gigabytes.
      const kill = setTimeout(() => {
        try {
          process.kill(-(child.pid as number), "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }, 10_000);
      await exited;
      clearTimeout(kill);
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * One request over node:http: `localAddress` picks the client's source address (any of
 * 127.0.0.0/8 reaches a loopback server), headers are sent as given (X-Forwarded-For too).
 */
export function send(
  url: string,
  options: {
    method?: string;
    body?: unknown;
    /** Sent as a plain HTML form posts it (application/x-www-form-urlencoded) instead of JSON. */
    form?: Record<string, string>;
    headers?: Record<string, string>;
    localAddress?: string;
  } = {},
): Promise<Reply> {
  const target = new URL(url);
  const payload =
    options.form !== undefined
      ? new URLSearchParams(options.form).toString()
      : options.body === undefined
        ? undefined
        : JSON.stringify(options.body);
  const type = options.form !== undefined ? "application/x-www-form-urlencoded" : "application/json";
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: options.method ?? (payload === undefined ? "GET" : "POST"),
        localAddress: options.localAddress,
        headers: {
          origin: target.origin,
          ...(payload === undefined ? {} : { "content-type": type }),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The `name=value` pairs of a reply's Set-Cookie headers, as a Cookie header. */
export function cookiesOf(reply: Reply): string {
  const set = reply.headers["set-cookie"];
  return (Array.isArray(set) ? set : set === undefined ? [] : [set]).map((c) => c.split(";")[0]).join("; ");
}

export interface AuthStack {
  web: WebServer;
  url: string;
  databaseUrl: string;
  pool: pg.Pool;
  mail: MailCapture;
  /** PRIM_INTERNAL_SECRET (a second server over the same state needs it). */
  secret: string;
  /** The env every server of this stack starts with (add to it for another process). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A migrated database, the mail capture and one dashboard server over them (`devMailPage`: the
 * capture's viewer handed to the dashboard, as `npm run cloud` does).
 */
export async function startAuthStack(
  label: string,
  env: Record<string, string> = {},
  options: { devMailPage?: boolean } = {},
): Promise<AuthStack> {
  const database = freshDatabase(label);
  await migrate({ databaseUrl: database.url });
  const secret = randomBytes(24).toString("hex");
  const mail = await startMailCapture({ secret });
  const base: Record<string, string> = {
    DATABASE_URL: database.url,
    PRIM_INTERNAL_SECRET: secret,
    SMTP_URL: mail.smtpUrl,
    ...(options.devMailPage ? { PRIM_MAIL_CAPTURE_URL: mail.url } : {}),
    ...env,
  };
  const pool = new pg.Pool({ connectionString: database.url, max: 3 });
  let web: WebServer | undefined;
  try {
    web = await startWebServer(base);
  } catch (err) {
    await mail.close();
    await pool.end();
    await database.drop();
    throw err;
  }
  const started = web;
  return {
    web: started,
    url: started.url,
    databaseUrl: database.url,
    pool,
    mail,
    secret,
    env: base,
    stop: async () => {
      await started.stop();
      await mail.close();
      await pool.end();
      await database.drop();
    },
  };
}

/** The confirmation link mailed to `email` (the newest). */
export async function confirmationLink(mail: MailCapture, email: string): Promise<string> {
  const message = await mail.waitFor((m) => m.to.includes(email) && m.subject.startsWith("Confirm your email"));
  const newest = mail
    .messages()
    .filter((m) => m.to.includes(email) && m.subject.startsWith("Confirm your email"))
    .at(-1);
  const link = (newest ?? message).links[0];
  if (link === undefined) throw new Error(`no link in the mail to ${email}`);
  return link;
}

/**
 * The page a confirmation link opens, and its form posted with `password` (what the browser
 * sends: the link's token and `next`, the password typed) from `localAddress`.
 */
export async function confirmWithPassword(
  stack: AuthStack,
  link: string,
  password: string,
  options: { next?: string; localAddress?: string } = {},
): Promise<{ page: Reply; posted: Reply }> {
  const page = await send(link, { localAddress: options.localAddress });
  const query = new URL(link).searchParams;
  const posted = await send(`${stack.url}/api/auth/confirm-email`, {
    form: { token: query.get("token") ?? "", next: options.next ?? query.get("next") ?? "/", password },
    localAddress: options.localAddress,
  });
  return { page, posted };
}

/**
 * Signs up through the dashboard and confirms the address the way its owner would: the link
 * in the captured mail opened, the password entered on its page. Answers the session cookie
 * the confirmation sets.
 */
export async function signUpVerified(stack: AuthStack, email: string, password: string): Promise<string> {
  const made = await send(`${stack.url}/api/auth/sign-up/email`, { body: { email, password, name: email } });
  if (made.status !== 200) throw new Error(`sign-up of ${email}: ${made.status} ${JSON.stringify(made.body)}`);
  const { posted } = await confirmWithPassword(stack, await confirmationLink(stack.mail, email), password);
  const cookie = cookiesOf(posted);
  if (posted.status !== 302 || !cookie.includes("session_token")) {
    throw new Error(`confirming ${email}: ${posted.status}, cookies ${cookie || "none"}`);
  }
  return cookie;
}
