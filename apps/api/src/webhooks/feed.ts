import type { ChangePage, InvokeMeta, Principal } from "@prim/engine";

/**
 * What the webhook dispatcher reads: the change feed (issue 42, items 1 and 2) of a group or one
 * primitive after a cursor, each change with the id its deliveries carry as `webhook-id`.
 */

/** One committed change as a webhook carries it (never a value). */
export interface FeedChange {
  /** `webhook-id`: unique per change, the same on every retry. */
  messageId: string;
  group: string;
  primitive: { id: string; type: string; name: string };
  change: { seq: number; ts: number; op: string; key?: string; path?: string; id?: string; table?: string } & Record<
    string,
    unknown
  >;
}

export interface ChangeFeed {
  /** The feed's cursor now (a new endpoint starts there), read as `principal` (which must reach it). */
  head(principal: Principal, subject: { group?: string; primitive?: string }): Promise<string | null>;
  /** Changes after `cursor`, oldest first, at most `limit`; the cursor after the last one. */
  read(
    workspace: string,
    subject: { groupId: string | null; primitiveId: string | null },
    cursor: string | null,
    limit: number,
  ): Promise<{ changes: FeedChange[]; cursor: string | null }>;
}

/** The engine calls the feed makes: a cell's own engines (`WorkspaceEngines`), or any invoker for `head`. */
export interface FeedInvoker {
  invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: string | null,
    input: unknown,
    meta?: InvokeMeta,
  ): Promise<O>;
}

const PAGE = 1000;

/** The dispatcher's principal: the workspace's own, for every group; its reads are `system` ones. */
const systemPrincipal = (workspace: string): Principal => ({
  kind: "account",
  workspace,
  actor: "webhooks",
  groupId: null,
  tools: null,
});

/**
 * The change feed as the engine serves it (`changes.read` for one primitive, `changes.group` for
 * a group): the dispatcher reads through this cell's engines as a `system` call (neither limited,
 * counted nor audited: each delivery is counted instead); `head` reads as the caller creating the
 * endpoint (who must reach what it names) up to the newest change.
 */
export class EngineFeed implements ChangeFeed {
  constructor(
    /** This cell's engines: the dispatcher serves only the workspaces placed here. */
    private readonly local: FeedInvoker,
    /** Any placement: an endpoint may be created through any cell. */
    private readonly routed: FeedInvoker,
  ) {}

  async head(principal: Principal, subject: { group?: string; primitive?: string }): Promise<string | null> {
    const [op, target] =
      subject.primitive !== undefined ? ["changes.read", subject.primitive] : ["changes.group", subject.group ?? null];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.routed.invoke<ChangePage>(principal, op, target, {
        limit: PAGE,
        ...(cursor === undefined ? {} : { after: cursor }),
      });
      cursor = page.cursor === "" ? cursor : page.cursor;
      if (page.data.length < PAGE) return cursor ?? null;
    }
  }

  async read(
    workspace: string,
    subject: { groupId: string | null; primitiveId: string | null },
    cursor: string | null,
    limit: number,
  ): Promise<{ changes: FeedChange[]; cursor: string | null }> {
    const [op, target] =
      subject.primitiveId !== null ? ["changes.read", subject.primitiveId] : ["changes.group", subject.groupId];
    const page = await this.local.invoke<ChangePage>(
      systemPrincipal(workspace),
      op,
      target,
      { limit, ...(cursor === null ? {} : { after: cursor }) },
      { system: true },
    );
    const names = new Map<string, { type: string; name: string; group: string }>();
    const changes: FeedChange[] = [];
    for (const entry of page.data) {
      let named = names.get(entry.primitive);
      if (named === undefined) {
        named = await this.describe(workspace, entry.primitive);
        names.set(entry.primitive, named);
      }
      const { cursor: _cursor, primitive, type, ...change } = entry;
      changes.push({
        messageId: `${primitive}.${entry.epoch}.${entry.seq}`,
        group: named.group,
        primitive: { id: primitive, type, name: named.name },
        change,
      });
    }
    return { changes, cursor: page.data.length === 0 && page.cursor === "" ? cursor : page.cursor };
  }

  private async describe(workspace: string, id: string): Promise<{ type: string; name: string; group: string }> {
    const info = await this.local.invoke<{ type: string; name: string; group: string }>(
      systemPrincipal(workspace),
      "primitive.get",
      id,
      {},
      { system: true },
    );
    return { type: info.type, name: info.name, group: info.group };
  }
}
