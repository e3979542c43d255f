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
 * An `Invoker` that runs each call in an engine elsewhere, through its `POST /internal/invoke`
 * (packages/http `internal-invoke.ts`; wire format in `codec.ts`). Errors
 * come back as the same ServiceError (code, message, status, headers) the engine threw; an
 * engine that cannot be reached is 500 `internal_error` (safe to retry), with no address or
 * system message in it. `meta.signal` aborts the HTTP request, which aborts the engine's call
 * (a long poll stops waiting).
 */
export class RemoteInvoker implements Invoker {
  private readonly endpoint: string;

  constructor(private readonly options: RemoteInvokerOptions) {
    this.endpoint = `${options.url.replace(/\/+$/, "")}/internal/invoke`;
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
    let response: Response;
    let answer: WireAnswer;
    try {
      response = await fetch(this.endpoint, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.options.secret}`,
          "content-type": "application/json",
          ...(meta.requestId === undefined ? {} : { "x-request-id": meta.requestId }),
        },
        body: JSON.stringify(request),
        signal: meta.signal,
      });
      answer = (await response.json()) as WireAnswer;
    } catch (err) {
      if (meta.signal?.aborted) throw err;
      throw new ServiceError("internal_error", "internal error; safe to retry (the engine did not answer)", {
        cause: err,
      });
    }
    if ("error" in answer) throw errorFromWire(response.status, answer.error ?? {});
    // An operation that answers nothing (`undefined`) arrives without `result`.
    if (!response.ok) {
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
