"use client";
import { CheckIcon, ChevronsUpDownIcon, PlusIcon } from "lucide-react";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useRef } from "react";

export type WorkspaceSummary = { id: string; name: string; plan: string; role: string };

const itemClass =
  "flex items-center gap-2 rounded-md px-2.5 py-1.5 text-sm outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring";

/**
 * The current workspace's name, plan and role; opens (in place, in the sidebar) the list of the
 * user's workspaces and "New workspace". A native disclosure (<details>), not a floating menu:
 * no positioning or menu code in every page's first load.
 */
export function WorkspaceSwitcher({
  current,
  workspaces,
}: {
  current: WorkspaceSummary;
  workspaces: WorkspaceSummary[];
}) {
  const details = useRef<HTMLDetailsElement>(null);
  const pathname = usePathname();
  // biome-ignore lint/correctness/useExhaustiveDependencies: close whenever the page changes
  useEffect(() => {
    if (details.current !== null) details.current.open = false;
  }, [pathname]);
  return (
    <details ref={details} className="group">
      <summary className="flex w-full cursor-pointer list-none items-center gap-2 rounded-md border bg-background px-2.5 py-2 text-left outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring [&::-webkit-details-marker]:hidden">
        <span
          aria-hidden
          className="flex size-7 shrink-0 items-center justify-center rounded-md bg-primary text-xs font-semibold text-primary-foreground"
        >
          {current.name.slice(0, 1).toUpperCase()}
        </span>
        <span className="min-w-0 flex-1">
          <span className="sr-only">Switch workspace: </span>
          <span className="block truncate text-sm font-medium">{current.name}</span>
          <span className="block truncate text-xs text-muted-foreground">
            {current.plan} · {current.role}
          </span>
        </span>
        <ChevronsUpDownIcon className="size-4 shrink-0 text-muted-foreground" aria-hidden />
      </summary>
      <div className="mt-1 rounded-md border bg-background p-1">
        <p className="px-2.5 py-1 text-xs font-medium text-muted-foreground">Workspaces</p>
        <ul>
          {workspaces.map((w) => (
            <li key={w.id}>
              <Link href={`/w/${w.id}`} className={itemClass} aria-current={w.id === current.id ? "true" : undefined}>
                <span className="min-w-0 flex-1 truncate">{w.name}</span>
                {w.id === current.id && <CheckIcon className="size-4" aria-hidden />}
              </Link>
            </li>
          ))}
          <li className="mt-1 border-t pt-1">
            <Link href="/" className={itemClass}>
              <PlusIcon className="size-4" aria-hidden />
              New workspace
            </Link>
          </li>
        </ul>
      </div>
    </details>
  );
}
