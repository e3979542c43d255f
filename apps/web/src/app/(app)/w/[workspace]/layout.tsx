import type { ReactNode } from "react";
import { Breadcrumbs } from "@/components/shell/breadcrumbs";
import { LazyToaster } from "@/components/shell/lazy-toaster";
import { MobileNav } from "@/components/shell/mobile-nav";
import { SidebarContent } from "@/components/shell/sidebar";
import { currentUser } from "@/server/auth";
import { requireWorkspace, workspacesOfUser } from "@/server/workspace-page";

type Props = { children: ReactNode; params: Promise<{ workspace: string }> };

/**
 * The workspace shell: a sidebar (switcher, the pages the role sees, the user, the theme) that
 * becomes a top bar with a menu sheet under 768 px, breadcrumbs, full-width content, toasts.
 * Each page checks membership again itself (a layout is not re-run on every navigation).
 */
export default async function WorkspaceLayout({ children, params }: Props) {
  const { workspace } = await params;
  // Signed out: the page itself sends the browser to sign in and back to its own address.
  if ((await currentUser()) === null) return children;
  const { user, ws } = await requireWorkspace(workspace, "overview");
  const workspaces = (await workspacesOfUser(user.id)).map((w) => ({
    id: w.id,
    name: w.name,
    plan: w.plan,
    role: w.role,
  }));
  const shell = {
    workspace: { id: workspace, name: ws.name, plan: ws.plan, role: ws.role },
    workspaces,
    email: user.email,
  };
  return (
    <div data-app-shell className="flex min-h-screen">
      {/* A div, not <aside>: the root layout's <main> holds the shell, and a complementary
          landmark belongs at the top level (the sidebar's navigation is a <nav>). */}
      <div data-sidebar className="sticky top-0 hidden h-screen w-64 shrink-0 border-r bg-sidebar md:block">
        <SidebarContent {...shell} />
      </div>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="sticky top-0 z-30 flex h-14 items-center gap-3 border-b bg-background/95 px-4 backdrop-blur md:px-8">
          <MobileNav {...shell} />
          <Breadcrumbs workspace={workspace} name={ws.name} />
        </header>
        <div className="flex-1 px-4 py-6 md:px-8">{children}</div>
      </div>
      <LazyToaster />
    </div>
  );
}
