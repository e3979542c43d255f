import type { RestRoute } from "../route.js";

const tag = "groups";

export const GROUP_ROUTES: readonly RestRoute[] = [
  { method: "POST", url: "/v1/groups", op: "group.create", from: "body", status: 201, summary: "Create a group", tag },
  { method: "GET", url: "/v1/groups", op: "group.list", from: "query", summary: "List groups (paged Manifest)", tag },
  {
    method: "GET",
    url: "/v1/groups/:group",
    op: "group.get",
    target: "group",
    from: "none",
    summary: "Get a group with its primitives",
    tag,
  },
  {
    method: "DELETE",
    url: "/v1/groups/:group",
    op: "group.delete",
    target: "group",
    from: "query",
    status: 204,
    summary: "Delete a group; a non-empty group needs force=true, which deletes its primitives",
    tag,
  },
  {
    method: "GET",
    url: "/v1/groups/:group/audit",
    op: "audit.group",
    target: "group",
    from: "query",
    summary: "The group's audit trail, newest first",
    tag,
  },
  {
    method: "GET",
    url: "/v1/whoami",
    op: "auth.whoami",
    from: "none",
    summary: "The credential's workspace and scope (never the key itself)",
    tag: "account",
  },
  {
    method: "GET",
    url: "/v1/audit",
    op: "audit.list",
    from: "query",
    summary: "The audit trail, newest first",
    tag: "audit",
  },
];
