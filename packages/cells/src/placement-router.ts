import { clientIpOf, forwardedOf } from "@prim/http";
import { type InvokeMeta, type Invoker, type Principal, ServiceError } from "@prim/wire";
import { RemoteInvokers } from "@prim/wire/invoke";
import type { FastifyReply, FastifyRequest } from "fastify";
import { forwardRequest } from "./forwarding.js";
import type { PlacementCache } from "./placement-cache.js";
import { type WorkspaceEngines, workspaceMoving } from "./workspace-engines.js";

/** How long a call waits for a frozen workspace (a move) before answering 503. */
export const FREEZE_WAIT_MS = 10_000;
/** A freeze in Postgres outlives its lease by this much here (clocks of two machines may disagree). */
export const FREEZE_GRACE_MS = 2_000;
/** Cells a request may pass through: the first one, and one more whose placement was stale. */
const MAX_HOPS = 2;
const POLL_MS = 25;
/** The answer's header naming the cell that served a REST request. */
export const CELL_HEADER = "x-prim-cell";

export type Route = { kind: "here" } | { kind: "frozen" } | { kind: "remote"; cell: string | null; url: string };
const HERE: Route = { kind: "here" };
const FROZEN: Route = { kind: "frozen" };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PlacementRouterOptions {
  placements: PlacementCache;
  /** The cells' shared secret (none: nothing is remote, every call is served here). */
  secret: string | undefined;
  /** This process's cell (apps/api): its id and its workspaces' engines. */
  cell?: { id: string; engines: WorkspaceEngines };
  /**
   * A process without a cell (apps/mcp): where calls go when the placement or the cell's
   * address is unknown — one cell, or Postgres unreachable — (`PRIM_INTERNAL_URL`, whose cell
   * routes them on).
   */
  fallbackUrl?: string;
}

/**
 * The door to data with several cells (CLOUD.md, "Scale-out"), one for every process: each
 * call goes where the workspace's placement says, resolved once per request.
 *
 * In a cell (apps/api): here, to this cell's engines, unless frozen (a move or a ship holds
 * it), when it waits up to FREEZE_WAIT_MS and routes again (503 past that). Elsewhere: to the
 * owner's internal listener (`RemoteInvoker`), at most MAX_HOPS cells deep; a cell that
 * receives a forward for a workspace it does not serve reads the placement afresh before it
 * forwards again. The REST app hands every request to `divert` first: one for another cell is
 * streamed there whole (forwarding.ts), one served here is marked as placed, and its `invoke`
 * then goes straight to the engines (the engines' own freeze check, in the tick they count the
 * call, still holds it for a move that began meanwhile).
 *
 * Without a cell (apps/mcp): every call goes to the internal listener of the cell its
 * workspace is placed on (a stale placement costs a hop: that cell forwards), else to
 * `fallbackUrl`.
 */
export class PlacementRouter implements Invoker {
  /** The cells' internal invoke (none without the cells' secret: then nothing is remote). */
  private readonly remotes: RemoteInvokers | undefined;
  /** REST requests `divert` streamed to another cell (a Node hop the edge did not spare). */
  forwarded = 0;
  /** Principals of REST requests `divert` placed here (one object per request: see `divert`). */
  private readonly placedHere = new WeakSet<Principal>();

  constructor(private readonly options: PlacementRouterOptions) {
    this.remotes = options.secret === undefined ? undefined : new RemoteInvokers(options.secret);
    if (options.cell === undefined && (options.fallbackUrl === undefined || options.secret === undefined)) {
      throw new Error("a placement router without a cell needs a fallback URL and the cells' secret");
    }
  }

  private get placements(): PlacementCache {
    return this.options.placements;
  }

  /** Where calls for `workspace` go now (`hops`: cells the call has passed already). */
  async route(workspace: string, hops: number): Promise<Route> {
    const { cell, fallbackUrl } = this.options;
    if (cell === undefined) return this.routeFrom(workspace, fallbackUrl as string);
    if (workspace === "") return HERE; // nobody's (open paths): no operation accepts it
    let placement = await this.placements.placement(workspace, { claimer: cell.id });
    if (placement !== null && placement.cell !== cell.id && hops > 0) {
      placement = await this.placements.placement(workspace, { claimer: cell.id, fresh: true });
    }
    if (placement === null) return HERE; // no such workspace: the engine answers as it always does
    if (placement.cell !== cell.id) {
      if (hops >= MAX_HOPS) throw workspaceMoving();
      const url = await this.placements.cellUrl(placement.cell);
      if (url === null || this.options.secret === undefined) {
        throw new ServiceError(
          "internal_error",
          `internal error; safe to retry (cell '${placement.cell}', which serves this workspace, has no internal address)`,
        );
      }
      return { kind: "remote", cell: placement.cell, url };
    }
    const frozenInPostgres = placement.frozenUntil !== null && Date.now() < placement.frozenUntil + FREEZE_GRACE_MS;
    return frozenInPostgres || cell.engines.isFrozen(workspace) ? FROZEN : HERE;
  }

  /** Without a cell: the owner's internal listener, else the fallback (Postgres unreachable too). */
  private async routeFrom(workspace: string, fallbackUrl: string): Promise<Route> {
    try {
      const placement = await this.placements.placement(workspace);
      if (placement === null) return { kind: "remote", cell: null, url: fallbackUrl };
      const url = await this.placements.cellUrl(placement.cell);
      return url === null
        ? { kind: "remote", cell: null, url: fallbackUrl }
        : { kind: "remote", cell: placement.cell, url };
    } catch {
      return { kind: "remote", cell: null, url: fallbackUrl };
    }
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
    const engines = this.options.cell?.engines;
    // A REST request `divert` placed here: its placement is resolved already.
    if (engines !== undefined && this.placedHere.has(principal) && !engines.isFrozen(principal.workspace)) {
      return engines.invoke<O>(principal, opName, target, input, meta);
    }
    const hops = meta.hops ?? 0;
    const deadline = Date.now() + FREEZE_WAIT_MS;
    for (;;) {
      const route = await this.settledRoute(principal.workspace, hops);
      if (route.kind === "remote") {
        // From a cell, the call is one hop further; from apps/mcp it is the first.
        const sent = engines === undefined ? meta : { ...meta, hops: hops + 1 };
        return this.remote(route.url)
          .invoke<O>(principal, opName, target, input, sent)
          .catch((err: unknown) => {
            // Not answered at all: its address may be stale (a restart elsewhere); read it anew next time.
            if (err instanceof ServiceError && err.code === "internal_error" && err.status === 500) {
              this.placements.forget(null);
            }
            throw err;
          });
      }
      const here = engines as WorkspaceEngines;
      // Checked again in the same tick the engines count the call (a freeze may have begun).
      if (!here.isFrozen(principal.workspace)) return here.invoke<O>(principal, opName, target, input, meta);
      if (Date.now() >= deadline) throw workspaceMoving();
    }
  }

  /**
   * The REST app's `divert`, once per request after authentication: a request for a workspace
   * another cell serves is streamed there whole (forwarding.ts); one for a frozen workspace
   * waits here before its body is read; one served here gets a principal of its own, marked
   * placed, so that its `invoke` does not resolve the placement again.
   */
  async divert(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = await this.settledRoute(req.principal.workspace, forwardedOf(req.raw)?.hops ?? 0);
    const here = this.options.cell?.id;
    if (route.kind !== "remote") {
      // Which cell served it (the edge's tests and operators read it; a forward passes it back).
      if (here !== undefined) reply.header(CELL_HEADER, here);
      // A copy: a resolver may hand the same principal object to several requests.
      const placed = { ...req.principal };
      this.placedHere.add(placed);
      req.principal = placed;
      return;
    }
    forwardRequest(req, reply, {
      cellUrl: route.url,
      secret: this.options.secret as string,
      clientIp: clientIpOf(req),
      onUnreachable: () => this.placements.forget(null),
      ...(here === undefined ? {} : { via: here }),
    });
    this.forwarded += 1;
  }

  private remote(url: string) {
    // `route` answers "remote" only with the secret set.
    return (this.remotes as RemoteInvokers).for(url);
  }
}
