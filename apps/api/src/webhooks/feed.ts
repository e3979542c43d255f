import type { Principal } from "@prim/engine";

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
