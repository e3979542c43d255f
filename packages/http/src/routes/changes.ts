import { changePage } from "@prim/wire/schemas";
import type { RestRoute } from "../route.js";

const tag = "changes";

const description =
  "Committed changes in commit order, without values (never a secret's value). `after` is the `cursor` of a previous answer or entry (opaque; a cursor of another primitive or group, or a made-up one, is 400); without it the feed starts at the oldest change still held. `wait` (e.g. `20s`, at most `30s`) holds the request open until a change commits. A cursor past the retention window (7 days or 100,000 entries per primitive) or from before a restore is 409 `conflict`, whose message names the oldest cursor still held. With `Accept: text/event-stream` the answer is a stream of `change` events whose ids are cursors: reconnect with `Last-Event-ID` to resume.";

const responses = {
  200: {
    description: "A page of changes (JSON), or with Accept: text/event-stream, a stream of `change` events",
    json: changePage,
    bytes: "text/event-stream",
  },
} as const;

export const CHANGE_ROUTES: readonly RestRoute[] = [
  {
    method: "GET",
    url: "/v1/primitives/:id/changes",
    op: "changes.read",
    target: "id",
    from: "query",
    abortable: true,
    sse: true,
    responses,
    summary: "The primitive's change feed (long poll, or SSE)",
    description,
    tag,
  },
  {
    method: "GET",
    url: "/v1/groups/:group/changes",
    op: "changes.group",
    target: "group",
    from: "query",
    abortable: true,
    sse: true,
    responses,
    summary: "The group's change feed: its primitives' feeds merged (long poll, or SSE)",
    description: `${description} The group's cursor holds each primitive's position; entries of one primitive keep their commit order.`,
    tag,
  },
];
