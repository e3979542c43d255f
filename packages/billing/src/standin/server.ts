import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { ROUTES } from "./api.js";
import { parseForm } from "./form.js";
import { completeCheckout, endPeriod, failPayment, payInvoice, setCancelAtPeriodEnd } from "./lifecycle.js";
import { checkoutPage, invoicePage, portalPage } from "./pages.js";
import { type ApiContext, Store, StripeFault } from "./resources.js";
import { eventObject, newId } from "./shapes.js";

export interface StripeStandInOptions {
  /** Where signed webhook events are POSTed (can be set later with setWebhookUrl). */
  webhookUrl?: string;
  /** The endpoint secret events are signed with (whsec_...). */
  webhookSecret: string;
  port?: number;
  host?: string;
  /** Clock in seconds (tests move time). */
  now?: () => number;
  /**
   * Creates whose duplicates matter (customers, products, prices, meters, meter events,
   * checkout sessions) must carry the caller's own Idempotency-Key, not the SDK's generated
   * `stripe-node-retry-…` one (default true: Prim's code always passes its own).
   */
  ownIdempotencyKeys?: boolean;
}

export interface StripeStandIn {
  url: string;
  /** Options for `new Stripe(key, sdkOptions)`. */
  sdkOptions: { host: string; port: number; protocol: "http" };
  setWebhookUrl(url: string): void;
  /** Accepted meter events (a duplicate identifier is not counted). */
  meterEvents(): { event_name: string; identifier: string; customer: string; value: number; timestamp: number }[];
  /** Identifiers of meter events refused as duplicates. */
  duplicateMeterEvents(): string[];
  /** Every webhook delivery: the event's type and id and the receiver's HTTP status (0: unreachable). */
  deliveries(): { id: string; type: string; status: number }[];
  completeCheckout(sessionId: string): Promise<{ subscription: string }>;
  failPayment(subscriptionId: string): Promise<void>;
  payInvoice(subscriptionId: string): Promise<void>;
  endPeriod(subscriptionId: string): Promise<void>;
  /** The next `count` API requests answer `status` with a Stripe error. */
  failNext(count: number, status?: number): void;
  /** Sends an emitted event again (same id, signed anew); answers the receiver's status. */
  redeliver(eventId: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * A local stand-in for the Stripe endpoints Prim uses (README.md beside this file), for tests
 * and local development: the real SDK talks to it through `host`/`port`/`protocol`; it checks
 * the secret key, required fields and idempotency keys, serves the hosted checkout and portal
 * pages, and posts webhook events signed with the SDK's own `generateTestHeaderString`.
 */
export async function startStripeStandIn(options: StripeStandInOptions): Promise<StripeStandIn> {
  const store = new Store(options.now ?? (() => Math.floor(Date.now() / 1000)));
  let webhookUrl = options.webhookUrl;
  const deliveries: { id: string; type: string; status: number }[] = [];
  const idempotent = new Map<string, { hash: string; status: number; body: string }>();
  let failing = { count: 0, status: 500 };
  let baseUrl = "";

  const deliver = async (payload: string): Promise<number> => {
    if (webhookUrl === undefined) return 0;
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: options.webhookSecret,
      timestamp: store.now(),
    });
    try {
      const res = await fetch(webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": signature },
        body: payload,
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  };
  const ctx: ApiContext = {
    store,
    get baseUrl() {
      return baseUrl;
    },
    emit: async (input) => {
      // The event carries its object as it is now: sent (and kept for redelivery) as JSON.
      const event = eventObject(input, store.now());
      const payload = JSON.stringify(event);
      store.events.set(event.id, payload);
      deliveries.push({ id: event.id, type: event.type, status: await deliver(payload) });
    },
  };

  const routes = ROUTES.map((r) => ({
    ...r,
    pattern: new RegExp(`^${r.path.replace(":id", "([^/]+)")}$`),
  }));

  async function api(
    req: IncomingMessage,
    path: string,
    query: string,
    text: string,
  ): Promise<{ status: number; body: string; headers?: Record<string, string> }> {
    const auth = /^Bearer (sk_test_\S+)$/.exec(req.headers.authorization ?? "");
    if (auth === null) {
      return new StripeFault(
        401,
        "invalid_request_error",
        "Invalid API Key provided (a test secret key sk_test_… is required)",
      ).toAnswer();
    }
    if (failing.count > 0) {
      failing.count -= 1;
      const type = failing.status >= 500 ? "api_error" : "invalid_request_error";
      return new StripeFault(failing.status, type, "the stand-in was told to fail this request").toAnswer();
    }
    const route = routes.find((r) => r.method === req.method && r.pattern.test(path));
    if (route === undefined)
      return new StripeFault(
        404,
        "invalid_request_error",
        `Unrecognized request URL (${req.method}: ${path})`,
      ).toAnswer();
    const id = decodeURIComponent(route.pattern.exec(path)?.[1] ?? "");
    const params = parseForm(req.method === "GET" || req.method === "DELETE" ? query : text);
    let replayKey: string | undefined;
    let hash = "";
    if (req.method === "POST") {
      const key = req.headers["idempotency-key"];
      if (typeof key !== "string" || key === "") {
        if (route.creates) {
          return new StripeFault(
            400,
            "invalid_request_error",
            "this stand-in requires an Idempotency-Key on every create",
            "Idempotency-Key",
          ).toAnswer();
        }
      } else {
        if (route.keyed && options.ownIdempotencyKeys !== false && key.startsWith("stripe-node-retry-")) {
          return new StripeFault(
            400,
            "invalid_request_error",
            "Prim's creates carry their own Idempotency-Key (this one was generated by the SDK)",
            "Idempotency-Key",
          ).toAnswer();
        }
        replayKey = `${auth[1]}:${key}`;
        hash = createHash("sha256").update(`${path}\n${text}`).digest("hex");
        const seen = idempotent.get(replayKey);
        if (seen !== undefined) {
          if (seen.hash !== hash) {
            return new StripeFault(
              400,
              "idempotency_error",
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}'.`,
            ).toAnswer();
          }
          return { status: seen.status, body: seen.body, headers: { "Idempotent-Replayed": "true" } };
        }
      }
    }
    let answer: { status: number; body: string };
    try {
      answer = { status: 200, body: JSON.stringify(await route.handler(ctx, params, id)) };
    } catch (err) {
      if (!(err instanceof StripeFault)) throw err;
      answer = err.toAnswer();
    }
    if (replayKey !== undefined && answer.status < 500) idempotent.set(replayKey, { hash, ...answer });
    return answer;
  }

  async function pages(req: IncomingMessage, res: ServerResponse, path: string, text: string): Promise<boolean> {
    const m = /^\/(checkout|portal|invoices)\/([^/]+)(?:\/(pay|cancel))?$/.exec(path);
    if (m === null) return false;
    const [, kind, id = "", action] = m;
    const html = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
    if (kind === "checkout") {
      const record = store.sessions.get(id);
      if (record === undefined) return false;
      if (req.method === "POST" && action === "pay") {
        await completeCheckout(ctx, id);
        const success = record.session.success_url ?? "";
        res.writeHead(303, { location: success.replace("{CHECKOUT_SESSION_ID}", id) }).end();
      } else html(checkoutPage(store, record));
      return true;
    }
    if (kind === "portal") {
      const portal = store.portals.get(id);
      if (portal === undefined) return false;
      if (req.method === "POST" && action === "cancel") {
        const sub = store.subscriptions.get(String(parseForm(text).subscription));
        if (sub !== undefined && sub.customer === portal.customer && sub.status !== "canceled") {
          setCancelAtPeriodEnd(sub, true, store.now());
          await ctx.emit({ type: "customer.subscription.updated", data: { object: sub } });
        }
        res.writeHead(303, { location: `/portal/${id}` }).end();
      } else html(portalPage(store, portal));
      return true;
    }
    const invoice = store.invoices.get(id);
    if (invoice === undefined) return false;
    html(invoicePage(invoice));
    return true;
  }

  const controls: Record<string, (id: string) => Promise<unknown>> = {
    complete: async (id) => ({ subscription: (await completeCheckout(ctx, id)).id }),
    fail_payment: (id) => failPayment(ctx, id),
    pay_invoice: (id) => payInvoice(ctx, id),
    end_period: (id) => endPeriod(ctx, id),
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const url = new URL(req.url ?? "/", "http://standin");
        const text = Buffer.concat(chunks).toString("utf8");
        try {
          if (url.pathname.startsWith("/v1/")) {
            const answer = await api(req, url.pathname, url.search.slice(1), text);
            res.writeHead(answer.status, {
              "content-type": "application/json",
              "request-id": newId("req"),
              ...answer.headers,
            });
            res.end(answer.body);
            return;
          }
          const control = /^\/_standin\/(?:checkout|subscriptions)\/([^/]+)\/(\w+)$/.exec(url.pathname);
          if (req.method === "POST" && control !== null && controls[control[2] as string] !== undefined) {
            const out = await (controls[control[2] as string] as (id: string) => Promise<unknown>)(
              control[1] as string,
            );
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(out ?? { ok: true }));
            return;
          }
          if (url.pathname === "/_standin/meter_events") {
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(store.meterEvents));
            return;
          }
          if (!(await pages(req, res, url.pathname, text)))
            res.writeHead(404, { "content-type": "text/plain" }).end("not found");
        } catch (err) {
          const fault = err instanceof StripeFault ? err : new StripeFault(500, "api_error", (err as Error).message);
          res.writeHead(fault.status, { "content-type": "application/json" }).end(JSON.stringify(fault.body()));
        }
      })();
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://${host}:${port}`;

  return {
    url: baseUrl,
    sdkOptions: { host, port, protocol: "http" },
    setWebhookUrl: (url) => {
      webhookUrl = url;
    },
    meterEvents: () => structuredClone(store.meterEvents),
    duplicateMeterEvents: () => [...store.duplicates],
    deliveries: () => deliveries.map((d) => ({ ...d })),
    completeCheckout: async (id) => ({ subscription: (await completeCheckout(ctx, id)).id }),
    failPayment: (id) => failPayment(ctx, id),
    payInvoice: (id) => payInvoice(ctx, id),
    endPeriod: (id) => endPeriod(ctx, id),
    failNext: (count, status = 500) => {
      failing = { count, status };
    },
    redeliver: async (eventId) => {
      const payload = store.events.get(eventId);
      if (payload === undefined) throw new Error(`no event ${eventId}`);
      return deliver(payload);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
