"use client";
import {
  AppWindowIcon,
  CreditCardIcon,
  DatabaseIcon,
  GaugeIcon,
  KeyRoundIcon,
  LayoutDashboardIcon,
  type LucideIcon,
  ScrollTextIcon,
  SettingsIcon,
  UsersIcon,
  WebhookIcon,
} from "lucide-react";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { cn } from "@/lib/utils";
import { canSee, type PageId, WORKSPACE_PAGES, type WorkspaceRole, workspaceHref } from "@/lib/workspace-nav";

const ICONS: Record<PageId, LucideIcon> = {
  overview: LayoutDashboardIcon,
  data: DatabaseIcon,
  keys: KeyRoundIcon,
  apps: AppWindowIcon,
  webhooks: WebhookIcon,
  members: UsersIcon,
  usage: GaugeIcon,
  audit: ScrollTextIcon,
  billing: CreditCardIcon,
  settings: SettingsIcon,
};

/** The workspace's pages the role sees; the current one marked (`aria-current="page"`). */
export function NavLinks({
  workspace,
  role,
  onNavigate,
}: {
  workspace: string;
  role: WorkspaceRole;
  onNavigate?: () => void;
}) {
  const pathname = usePathname();
  const base = `/w/${workspace}`;
  return (
    <ul className="grid gap-0.5">
      {WORKSPACE_PAGES.filter((p) => canSee(role, p.id)).map((p) => {
        const href = workspaceHref(workspace, p.id);
        const current = p.id === "overview" ? pathname === base : pathname === href || pathname.startsWith(`${href}/`);
        const Icon = ICONS[p.id];
        return (
          <li key={p.id}>
            <Link
              href={href}
              onClick={onNavigate}
              aria-current={current ? "page" : undefined}
              className={cn(
                "flex items-center gap-2.5 rounded-md px-2.5 py-1.5 text-sm font-medium text-muted-foreground outline-none hover:bg-accent hover:text-accent-foreground focus-visible:ring-2 focus-visible:ring-ring",
                current && "bg-accent text-accent-foreground",
              )}
            >
              <Icon className="size-4 shrink-0" aria-hidden />
              {p.title}
            </Link>
          </li>
        );
      })}
    </ul>
  );
}
