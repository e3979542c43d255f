import { ServiceError } from "@prim/engine";
import { internalPrincipal } from "@prim/http";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { createEndpoint, requirePro, type WebhookRoutesDeps } from "./routes.js";

/**
 * `POST /internal/webhooks` on the cell's internal listener (the shared secret is its only
 * credential, checked by the listener for every route): the dashboard creates an endpoint for a
 * signed-in owner or admin. The two things it must not do itself happen here — the feed's head
 * is an engine read (as the user's principal, who must reach the group or primitive), and the
 * secret is sealed with the cell's master key, which the dashboard does not hold — through the
 * same path as `POST /v1/webhooks` (`createEndpoint`). Body: `{ principal, body }`, `body` as
 * the REST route's; answers 201 with the endpoint and its secret (shown once).
 */
const request = z.object({ principal: internalPrincipal, body: z.unknown() });

export function mountInternalWebhooks(internal: FastifyInstance, deps: WebhookRoutesDeps): void {
  internal.post("/internal/webhooks", async (req, reply) => {
    const parsed = request.safeParse(req.body);
    if (!parsed.success) {
      throw new ServiceError(
        "invalid_request",
        `internal webhooks: ${parsed.error.issues[0]?.message ?? "bad request"}`,
      );
    }
    const principal = parsed.data.principal as Parameters<typeof createEndpoint>[1];
    // As the REST route: account-level (owners and admins in the dashboard), never read-only.
    if (principal.kind !== "account") throw new ServiceError("forbidden", "webhooks are managed by owners and admins");
    if (principal.readOnly === true) throw new ServiceError("forbidden", "this credential is read-only");
    await requirePro(deps, principal.workspace);
    const made = await createEndpoint(deps, principal, parsed.data.body);
    reply.code(201);
    return made;
  });
}
