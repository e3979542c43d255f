"use client";
import { useQuery } from "@tanstack/react-query";
import { ChevronRightIcon } from "lucide-react";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useTRPC } from "@/lib/trpc";
import { WORKSPACE_PAGES } from "@/lib/workspace-nav";

/** Workspace › Page (› group › primitive on the data pages), from the address. */
export function Breadcrumbs({ workspace, name }: { workspace: string; name: string }) {
  const pathname = usePathname();
  const base = `/w/${workspace}`;
  const parts = pathname.startsWith(`${base}/`) ? pathname.slice(base.length + 1).split("/") : [];
  const crumbs: { label: string; href: string }[] = [{ label: name, href: base }];
  const page = WORKSPACE_PAGES.find((p) => p.segment !== "" && p.segment === parts[0]);
  if (page !== undefined) crumbs.push({ label: page.title, href: `${base}/${page.segment}` });
  const group = page?.id === "data" && parts[1] !== undefined ? decodeURIComponent(parts[1]) : undefined;
  if (group !== undefined) crumbs.push({ label: group, href: `${base}/data/${parts[1]}` });
  const primitive = group !== undefined && parts[2] !== undefined ? decodeURIComponent(parts[2]) : undefined;
  return (
    <nav aria-label="Breadcrumbs" className="min-w-0">
      <ol className="flex min-w-0 items-center gap-1 text-sm text-muted-foreground">
        {crumbs.map((c, i) => {
          const last = i === crumbs.length - 1 && primitive === undefined;
          return (
            <li
              key={c.href}
              className={`${i === 0 && crumbs.length > 1 ? "hidden sm:flex" : "flex"} min-w-0 items-center gap-1`}
            >
              {i > 0 && (
                <ChevronRightIcon className={`size-3.5 shrink-0 ${i === 1 ? "hidden sm:block" : ""}`} aria-hidden />
              )}
              <Link
                href={c.href}
                aria-current={last ? "page" : undefined}
                className={`block truncate hover:text-foreground ${last ? "font-medium text-foreground" : ""}`}
              >
                {c.label}
              </Link>
            </li>
          );
        })}
        {primitive !== undefined && (
          <li className="flex min-w-0 items-center gap-1">
            <ChevronRightIcon className="size-3.5 shrink-0" aria-hidden />
            <PrimitiveCrumb workspace={workspace} primitive={primitive} />
          </li>
        )}
      </ol>
    </nav>
  );
}

function PrimitiveCrumb({ workspace, primitive }: { workspace: string; primitive: string }) {
  const trpc = useTRPC();
  const info = useQuery({ ...trpc.primitive.get.queryOptions({ workspace, primitive }), retry: false });
  return (
    <span aria-current="page" className="block truncate font-medium text-foreground">
      {info.data?.name ?? "…"}
    </span>
  );
}
