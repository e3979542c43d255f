// The workspace's pages: their paths, titles and who sees them (the sidebar shows a page to the
// roles listed; the page's server part answers not-found to the others). Roles follow
// PERMISSIONS (src/server/trpc/permissions.ts): `billing` reaches no data page.

export type WorkspaceRole = "owner" | "admin" | "member" | "billing";

export type PageId =
  | "overview"
  | "data"
  | "keys"
  | "apps"
  | "webhooks"
  | "members"
  | "usage"
  | "audit"
  | "billing"
  | "settings";

const ALL: readonly WorkspaceRole[] = ["owner", "admin", "member", "billing"];
const DATA: readonly WorkspaceRole[] = ["owner", "admin", "member"];
const ADMINS: readonly WorkspaceRole[] = ["owner", "admin"];

export const WORKSPACE_PAGES: readonly {
  id: PageId;
  title: string;
  segment: string;
  roles: readonly WorkspaceRole[];
}[] = [
  { id: "overview", title: "Overview", segment: "", roles: ALL },
  { id: "data", title: "Data", segment: "data", roles: DATA },
  { id: "keys", title: "Keys", segment: "keys", roles: DATA },
  { id: "apps", title: "Apps", segment: "apps", roles: DATA },
  { id: "webhooks", title: "Webhooks", segment: "webhooks", roles: ADMINS },
  { id: "members", title: "Members", segment: "members", roles: ALL },
  { id: "usage", title: "Usage", segment: "usage", roles: ALL },
  { id: "audit", title: "Audit", segment: "audit", roles: ADMINS },
  { id: "billing", title: "Billing", segment: "billing", roles: ["owner", "billing"] },
  { id: "settings", title: "Settings", segment: "settings", roles: ADMINS },
];

export function pageOf(id: PageId) {
  const page = WORKSPACE_PAGES.find((p) => p.id === id);
  if (page === undefined) throw new Error(`unknown workspace page ${id}`);
  return page;
}

export function canSee(role: WorkspaceRole, id: PageId): boolean {
  return pageOf(id).roles.includes(role);
}

/** `/w/<workspace>` or `/w/<workspace>/<segment>`. */
export function workspaceHref(workspace: string, id: PageId = "overview"): string {
  const segment = pageOf(id).segment;
  return segment === "" ? `/w/${workspace}` : `/w/${workspace}/${segment}`;
}
