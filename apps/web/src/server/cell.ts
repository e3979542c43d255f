import type { Principal } from "@prim/wire";
import { primInvoke } from "./prim";

/** An endpoint as `POST /v1/webhooks` answers it: with its signing secret, the only time it is shown. */
export type CreatedWebhook = import("@prim/db").WebhookInfo & { secret: string };

/**
 * The cell's internal routes the dashboard calls besides `POST /internal/invoke` (its Invoker):
 * what needs the cell itself — here creating a webhook endpoint, whose secret is sealed with the
 * cell's master key (the dashboard holds none) after an engine read of the feed's head
 * (apps/api `webhooks/internal.ts`). Authenticated by the shared secret, acting as the signed-in
 * user's principal; errors come back as the cell's ServiceError (code, message, status).
 */
export interface CellCalls {
  createWebhook(principal: Principal, body: Record<string, unknown>): Promise<CreatedWebhook>;
}

export function cellCalls(options: { url: string; secret: string }): CellCalls {
  const base = options.url.replace(/\/+$/, "");
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const { errorFromWire } = await primInvoke();
    let response: Response;
    let answer: { error?: { code?: unknown; message?: unknown } } & Record<string, unknown>;
    try {
      response = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${options.secret}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      answer = (await response.json()) as typeof answer;
    } catch {
      throw errorFromWire(500, {
        code: "internal_error",
        message: "internal error; safe to retry (the cell did not answer)",
      });
    }
    if (!response.ok) throw errorFromWire(response.status, answer.error ?? {});
    return answer as T;
  };
  return {
    createWebhook: (principal, body) => post<CreatedWebhook>("/internal/webhooks", { principal, body }),
  };
}
