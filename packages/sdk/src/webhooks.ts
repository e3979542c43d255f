import type { WebhookCreated, WebhookDelivery, WebhookFilter, WebhookInfo } from "@prim/wire";
import { seg } from "./primitive-client.js";
import type { Transport } from "./transport.js";

/**
 * Webhook endpoints (cloud, Pro; a workspace key): a group's or one primitive's committed
 * changes POSTed to a URL, signed in the Standard Webhooks format. A receiver checks them with
 * `verifyWebhook` (exported by this package) or any Standard Webhooks library.
 */

export interface WebhookOptions {
  url: string;
  /** A group's name or id: its every primitive. Give this or `primitive`. */
  group?: string;
  /** One primitive's id. */
  primitive?: string;
  filter?: WebhookFilter;
  description?: string;
}

export class WebhooksClient {
  constructor(private readonly transport: Transport) {}

  /** `POST /v1/webhooks`: the endpoint with its `secret` (`whsec_…`), shown this once. */
  create(options: WebhookOptions): Promise<WebhookCreated> {
    return this.transport.request("POST", "/v1/webhooks", { body: { ...options } });
  }

  async list(): Promise<WebhookInfo[]> {
    return (await this.transport.request<{ data: WebhookInfo[] }>("GET", "/v1/webhooks")).data;
  }

  get(id: string): Promise<WebhookInfo> {
    return this.transport.request("GET", `/v1/webhooks/${seg(id)}`);
  }

  async delete(id: string): Promise<void> {
    await this.transport.request("DELETE", `/v1/webhooks/${seg(id)}`);
  }

  /** A disabled endpoint again: its pending deliveries go out from now. */
  enable(id: string): Promise<WebhookInfo> {
    return this.transport.request("POST", `/v1/webhooks/${seg(id)}/enable`);
  }

  /** The delivery log, newest first; `before` a delivery id pages back. */
  async deliveries(id: string, options: { limit?: number; before?: string } = {}): Promise<WebhookDelivery[]> {
    const path = `/v1/webhooks/${seg(id)}/deliveries`;
    return (await this.transport.request<{ data: WebhookDelivery[] }>("GET", path, { query: { ...options } })).data;
  }

  /** Sends a delivery once more: the same body and `webhook-id`. */
  async redeliver(id: string, delivery: string): Promise<void> {
    await this.transport.request("POST", `/v1/webhooks/${seg(id)}/deliveries/${seg(delivery)}/redeliver`);
  }
}
