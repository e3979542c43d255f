import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { ServiceError } from "../errors.js";
import type { Invoker } from "../invoker.js";
import { decodeWire, encodeWire, errorFromWire, type WireAnswer, type WireRequest } from "./codec.js";

export interface RemoteInvokerOptions {
  /** The engine's internal listener, e.g. `http://127.0.0.1:7778` (not the public port). */
  url: string;
  /** The cell's shared secret (`PRIM_INTERNAL_SECRET`). */
  secret: string;
}

/**
 * One keep-alive connection pool per engine (host and port) for every `RemoteInvoker` of the
 * process: a call reuses an idle connection instead of opening one. Plain `node:http` rather
 * than `fetch`: the WHATWG Request/Response/stream layers cost more than the call's own work on
 * a small answer. Idle connections do not keep the process alive.
 */
const POOLS = { "http:": new HttpAgent({ keepAlive: true }), "https:": new HttpsAgent({ keepAlive: true }) };

/** Where a `RemoteInvoker` posts: parsed once, not on every call. */
interface Endpoint {
  https: boolean;
  target: RequestOptions;
}

function endpointOf(url: URL): Endpoint {
  const https = url.protocol === "https:";
  return {
    https,
    target: {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""), // an IPv6 literal without its brackets
      port: url.port,
      path: `${url.pathname}${url.search}`,
      agent: https ? POOLS["https:"] : POOLS["http:"],
    },
  };
}

/** POSTs `body` over the pool; answers the status and the whole body as text. */
function post(
  endpoint: Endpoint,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const options: RequestOptions = {
      ...endpoint.target,
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      ...(signal === undefined ? {} : { signal }),
    };
    const req = (endpoint.https ? httpsRequest : httpRequest)(options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * An `Invoker` that runs each call in an engine elsewhere, through its `POST /internal/invoke`
 * (packages/http `internal-invoke.ts`; wire format in `codec.ts`). Errors
 * come back as the same ServiceError (code, message, status, headers) the engine threw; an
 * engine that cannot be reached is 500 `internal_error` (safe to retry), with no address or
 * system message in it. `meta.signal` aborts the HTTP request, which aborts the engine's call
 * (a long poll stops waiting).
 */
export class RemoteInvoker implements Invoker {
  private readonly endpoint: Endpoint;

  constructor(private readonly options: RemoteInvokerOptions) {
    this.endpoint = endpointOf(new URL(`${options.url.replace(/\/+$/, "")}/internal/invoke`));
  }

  async invoke<O = unknown>(...call: Parameters<Invoker["invoke"]>): Promise<O> {
    const [principal, opName, target, input, meta = {}] = call;
    const request: WireRequest = {
      principal,
      op: opName,
      target,
      input: await encodeWire(input),
      meta: {
        ...(meta.requestId === undefined ? {} : { requestId: meta.requestId }),
        ...(meta.audit === undefined ? {} : { audit: meta.audit }),
        ...(meta.hops === undefined ? {} : { hops: meta.hops }),
      },
    };
    let status: number;
    let answer: WireAnswer;
    try {
      const headers: Record<string, string> = {
        authorization: `Bearer ${this.options.secret}`,
        "content-type": "application/json",
      };
      if (meta.requestId !== undefined) headers["x-request-id"] = meta.requestId;
      const response = await post(this.endpoint, headers, JSON.stringify(request), meta.signal);
      status = response.status;
      answer = JSON.parse(response.text) as WireAnswer;
    } catch (err) {
      // Aborted: the signal's reason, as `fetch` threw it.
      if (meta.signal?.aborted) throw meta.signal.reason ?? err;
      throw new ServiceError("internal_error", "internal error; safe to retry (the engine did not answer)", {
        cause: err,
      });
    }
    if ("error" in answer) throw errorFromWire(status, answer.error ?? {});
    // An operation that answers nothing (`undefined`) arrives without `result`.
    if (status < 200 || status > 299) {
      throw new ServiceError("internal_error", "internal error; safe to retry");
    }
    return decodeWire(answer.result) as O;
  }
}

/** One `RemoteInvoker` per engine URL, made on first use, all with one secret (several cells). */
export class RemoteInvokers {
  private readonly byUrl = new Map<string, RemoteInvoker>();

  constructor(private readonly secret: string) {}

  for(url: string): RemoteInvoker {
    let remote = this.byUrl.get(url);
    if (remote === undefined) {
      remote = new RemoteInvoker({ url, secret: this.secret });
      this.byUrl.set(url, remote);
    }
    return remote;
  }
}
