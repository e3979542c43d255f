"use client";
import { LogOutIcon, UserIcon } from "lucide-react";
import Link from "next/link";
import { ThemeToggle } from "@/components/theme-toggle";
import type { WorkspaceRole } from "@/lib/workspace-nav";
import { NavLinks } from "./nav-links";
import { type WorkspaceSummary, WorkspaceSwitcher } from "./workspace-switcher";

export interface SidebarProps {
  workspace: WorkspaceSummary & { role: WorkspaceRole };
  workspaces: WorkspaceSummary[];
  email: string;
}

/** The sidebar's content (also the mobile sheet's): switcher, pages, the user and the theme. */
export function SidebarContent({
  workspace,
  workspaces,
  email,
  onNavigate,
}: SidebarProps & { onNavigate?: () => void }) {
  return (
    <div className="flex h-full flex-col gap-4 p-3">
      <WorkspaceSwitcher current={workspace} workspaces={workspaces} />
      <nav aria-label="Workspace" className="flex-1 overflow-y-auto">
        <NavLinks workspace={workspace.id} role={workspace.role} onNavigate={onNavigate} />
      </nav>
      <div className="grid gap-2 border-t pt-3">
        <p className="truncate px-1 text-xs text-muted-foreground" title={email}>
          {email}
        </p>
        <div className="flex flex-wrap items-center gap-1">
          <Link
            href="/account"
            onClick={onNavigate}
            className="inline-flex items-center gap-1.5 rounded-md px-2 py-1 text-sm outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
          >
            <UserIcon className="size-4" aria-hidden />
            Account
          </Link>
          <button
            type="button"
            className="inline-flex items-center gap-1.5 rounded-md px-2 py-1 text-sm outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
            onClick={async () => {
              // The session library's own route (its browser client is 12 KiB this needs none of).
              await fetch("/api/auth/sign-out", {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: "{}",
              });
              window.location.assign("/sign-in");
            }}
          >
            <LogOutIcon className="size-4" aria-hidden />
            Sign out
          </button>
        </div>
        <ThemeToggle className="w-fit" />
      </div>
    </div>
  );
}
