import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

/** One request as the echo server received it. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface EchoServer {
  /** `http://<host>:<port>` */
  origin: string;
  host: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

/** The credential the request carried: bearer token, `x-api-key`, or the `key` query parameter. */
function credentialOf(req: Received): string {
  const auth = req.headers.authorization;
  if (typeof auth === "string" && auth.startsWith("Bearer ")) return auth.slice(7);
  const apiKey = req.headers["x-api-key"];
  if (typeof apiKey === "string") return apiKey;
  return new URL(req.url, "http://x").searchParams.get("key") ?? "";
}

/** The credential in every form an upstream might echo it. */
export function reflections(secret: string): Record<string, string> {
  const bytes = Buffer.from(secret, "utf8");
  return {
    plain: secret,
    base64: bytes.toString("base64"),
    base64url: bytes.toString("base64url"),
    url: encodeURIComponent(secret),
    url_lower: encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    form: new URLSearchParams({ v: secret }).toString().slice(2),
    json: JSON.stringify(secret),
    basic: Buffer.from(`user:${secret}`).toString("base64"),
    embedded: `prefix-${secret}-suffix`,
  };
}

/**
 * The credential with its letters' case changed, then encoded: what an upstream that treats the
 * value case-insensitively (a host name, a header, a lower-cased log line) sends back.
 */
export function casedReflections(secret: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [casing, cased] of [
    ["lower", secret.toLowerCase()],
    ["upper", secret.toUpperCase()],
  ] as const) {
    const bytes = Buffer.from(cased, "utf8");
    out[`${casing}`] = cased;
    out[`${casing}_url`] = encodeURIComponent(cased);
    out[`${casing}_url_lower_hex`] = encodeURIComponent(cased).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    out[`${casing}_base64`] = bytes.toString("base64");
    out[`${casing}_base64url`] = bytes.toString("base64url");
    out[`${casing}_hex`] = bytes.toString("hex");
    out[`${casing}_json`] = JSON.stringify(cased);
    out[`${casing}_json_ascii`] = JSON.stringify(JSON.stringify(cased)); // escaped twice
  }
  out.url_upper = encodeURIComponent(secret).toUpperCase(); // a whole percent-encoded text upper-cased
  out.basic_lower = Buffer.from(`user:${secret.toLowerCase()}`).toString("base64");
  return out;
}

/**
 * A real HTTP server on a loopback address that fetch calls go to. Routes: `/echo` (what was
 * received), `/reflect` (the credential in many encodings, in the body and in headers),
 * `/reflect-case` (its upper- and lower-cased forms encoded, and as a header name),
 * `/reflect-binary`, `/reflect-gzip`, `/redirect?to=&status=`, `/loop` (redirects to itself), `/slow` (never answers), `/huge`
 * (2 MiB), `/status?code=`.
 */
export async function startEcho(host = "127.0.0.1"): Promise<EchoServer> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: Received = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(r);
      const url = new URL(r.url, "http://x");
      const secret = credentialOf(r);
      switch (url.pathname) {
        case "/echo":
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ method: r.method, url: r.url, headers: r.headers, body: r.body }));
          return;
        case "/reflect": {
          const forms = reflections(secret);
          res.setHeader("x-plain", forms.plain as string);
          res.setHeader("x-b64", forms.base64 as string);
          res.setHeader("x-url", forms.url as string);
          res.setHeader("set-cookie", [`a=${forms.url}`, `b=${forms.base64url}`]);
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(forms));
          return;
        }
        case "/reflect-case": {
          // Case-changed forms in the body, in header values, and the credential as a header
          // NAME (Node lower-cases names) when it is a valid header name.
          const forms = casedReflections(secret);
          res.setHeader("x-upper", forms.upper as string);
          res.setHeader("x-lower-b64", forms.lower_base64 as string);
          if (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(secret)) res.setHeader(`x-${secret}`, "1");
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(forms));
          return;
        }
        case "/reflect-binary":
          res.setHeader("content-type", "application/octet-stream");
          res.end(Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(secret), Buffer.from([0x80, 0x81])]));
          return;
        case "/reflect-gzip":
          res.setHeader("content-encoding", "gzip");
          res.setHeader("content-type", "text/plain");
          res.end(gzipSync(Buffer.from(`token=${secret}; b64=${Buffer.from(secret).toString("base64")}`)));
          return;
        case "/redirect":
          res.statusCode = Number(url.searchParams.get("status") ?? 302);
          res.setHeader("location", url.searchParams.get("to") ?? "/echo");
          res.end();
          return;
        case "/loop":
          res.statusCode = 302;
          res.setHeader("location", "/loop");
          res.end();
          return;
        case "/slow":
          return; // never answers; the test's timeout ends it
        case "/huge":
          res.setHeader("content-type", "text/plain");
          res.end("x".repeat(2 * 1024 * 1024));
          return;
        case "/status":
          res.statusCode = Number(url.searchParams.get("code") ?? 200);
          res.end(`status ${res.statusCode}`);
          return;
        default:
          res.statusCode = 404;
          res.end("no such route");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host}:${port}`,
    host,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
