import type { Metadata } from "next";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { canSee, type PageId, pageOf } from "@/lib/workspace-nav";
import { currentUser } from "./auth";
import { db, type Membership, membership } from "./db";
import { primDb } from "./prim";

/** The signed-in user and their membership (null: not signed in / not a member); once per request. */
const access = cache(async (workspace: string) => {
  const user = await currentUser();
  if (user === null) return { user: null, ws: null };
  return { user, ws: await membership(workspace, user.id) };
});

/** The signed-in user's workspaces (the sidebar's switcher); once per request. */
export const workspacesOfUser = cache(async (userId: string) => (await primDb()).workspacesOf(db(), userId));

/**
 * A workspace page's server check: sign-in first (back to `path`), not-found for outsiders and
 * for a role that does not see the page (never told apart).
 */
export async function requireWorkspace(
  workspace: string,
  page: PageId,
  path: string = `/w/${workspace}`,
): Promise<{ user: NonNullable<Awaited<ReturnType<typeof currentUser>>>; ws: Membership }> {
  const { user, ws } = await access(workspace);
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(path)}`);
  if (ws === null || !canSee(ws.role, page)) notFound();
  return { user, ws };
}

/** "<Page> · <workspace name>" (the root template adds " · Prim"); outsiders learn no name. */
export async function workspaceMetadata(workspace: string, page: PageId, detail?: string): Promise<Metadata> {
  const { ws } = await access(workspace);
  if (ws === null) return { title: "Not found" };
  const title = pageOf(page).title;
  return { title: [detail, title, ws.name].filter((part) => part !== undefined && part !== "").join(" · ") };
}
