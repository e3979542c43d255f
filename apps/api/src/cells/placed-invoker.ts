import type { PlacementCache } from "@prim/db";
import { clientIpOf, forwardRequest } from "@prim/http";
import { type InvokeMeta, type Invoker, type Principal, ServiceError } from "@prim/wire";
import { RemoteInvokers } from "@prim/wire/invoke";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type WorkspaceEngines, workspaceMoving } from "../tenants.js";

/** How long a call waits for a frozen workspace (a move) before answering 503. */
export const FREEZE_WAIT_MS = 10_000;
/** A freeze in Postgres outlives its lease by this much here (clocks of two machines may disagree). */
export const FREEZE_GRACE_MS = 2_000;
/** Cells a request may pass through: the first one, and one more whose placement was stale. */
const MAX_HOPS = 2;
const POLL_MS = 25;

export type Route = { kind: "here" } | { kind: "frozen" } | { kind: "remote"; cell: string; url: string };
const HERE: Route = { kind: "here" };
const FROZEN: Route = { kind: "frozen" };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * This cell's door to data when there are several cells (CLOUD.md, "Scale-out"): each call goes
 * where the workspace's placement says. Here: to this cell's engines, unless frozen (a move or
 * a ship holds it), when it waits up to FREEZE_WAIT_MS and routes again (503 past that).
 * Elsewhere: to the owner's internal listener (`RemoteInvoker`), at most MAX_HOPS cells deep;
 * a cell that receives a forward for a workspace it does not serve reads the placement afresh
 * before it forwards again. The REST app forwards whole HTTP requests the same way (`divert`),
 * so bodies stream instead of crossing as JSON.
 */
export class PlacedInvoker implements Invoker {
  /** The other cells' internal invoke (none without the cells' secret: then nothing is remote). */
  private readonly remotes: RemoteInvokers | undefined;

  constructor(
    readonly self: string,
    private readonly tenants: WorkspaceEngines,
    private readonly placements: PlacementCache,
    private readonly secret: string | undefined,
  ) {
    this.remotes = secret === undefined ? undefined : new RemoteInvokers(secret);
  }

  /** Where calls for `workspace` go now. */
  async route(workspace: string, hops: number): Promise<Route> {
    if (workspace === "") return HERE; // nobody's (open paths): no operation accepts it
    let placement = await this.placements.placement(workspace, { claimer: this.self });
    if (placement !== null && placement.cell !== this.self && hops > 0) {
      placement = await this.placements.placement(workspace, { claimer: this.self, fresh: true });
    }
    if (placement === null) return HERE; // no such workspace: the engine answers as it always does
    if (placement.cell !== this.self) {
      if (hops >= MAX_HOPS) throw workspaceMoving();
      const url = await this.placements.cellUrl(placement.cell);
      if (url === null || this.secret === undefined) {
        throw new ServiceError(
          "internal_error",
          `internal error; safe to retry (cell '${placement.cell}', which serves this workspace, has no internal address)`,
        );
      }
      return { kind: "remote", cell: placement.cell, url };
    }
    const frozenInPostgres = placement.frozenUntil !== null && Date.now() < placement.frozenUntil + FREEZE_GRACE_MS;
    return frozenInPostgres || this.tenants.isFrozen(workspace) ? FROZEN : HERE;
  }

  /** `route`, waiting out a freeze (up to FREEZE_WAIT_MS; then 503 with Retry-After). */
  async settledRoute(workspace: string, hops: number): Promise<Exclude<Route, { kind: "frozen" }>> {
    const deadline = Date.now() + FREEZE_WAIT_MS;
    for (;;) {
      const route = await this.route(workspace, hops);
      if (route.kind !== "frozen") return route;
      if (Date.now() >= deadline) throw workspaceMoving();
      await sleep(POLL_MS);
    }
  }

  async invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: string | null,
    input: unknown,
    meta: InvokeMeta = {},
  ): Promise<O> {
    const hops = meta.hops ?? 0;
    const deadline = Date.now() + FREEZE_WAIT_MS;
    for (;;) {
      const route = await this.settledRoute(principal.workspace, hops);
      if (route.kind === "remote") {
        return this.remote(route.url)
          .invoke<O>(principal, opName, target, input, { ...meta, hops: hops + 1 })
          .catch((err: unknown) => {
            // Not answered at all: its address may be stale (a restart elsewhere); read it anew next time.
            if (err instanceof ServiceError && err.code === "internal_error" && err.status === 500) {
              this.placements.forget(null);
            }
            throw err;
          });
      }
      // Checked again in the same tick the engines count the call (a freeze may have begun).
      if (!this.tenants.isFrozen(principal.workspace)) {
        return this.tenants.invoke<O>(principal, opName, target, input, meta);
      }
      if (Date.now() >= deadline) throw workspaceMoving();
    }
  }

  /**
   * The REST app's `divert`: a request for a workspace another cell serves is streamed there
   * whole (forwarding.ts); one for a frozen workspace waits here before its body is read.
   */
  async divert(req: FastifyRequest, reply: FastifyReply, hops: number): Promise<void> {
    const route = await this.settledRoute(req.principal.workspace, hops);
    if (route.kind !== "remote") return;
    forwardRequest(req, reply, {
      cellUrl: route.url,
      secret: this.secret as string,
      clientIp: clientIpOf(req),
      onUnreachable: () => this.placements.forget(null),
    });
  }

  private remote(url: string) {
    // `route` answers "remote" only with the secret set.
    return (this.remotes as RemoteInvokers).for(url);
  }
}
