import type { ReactNode } from "react";
import { cn } from "@/lib/utils";

/** What an empty list shows: a title, a line of help and what to do next. */
export function EmptyState({
  title,
  description,
  action,
  className,
}: {
  title: string;
  description?: ReactNode;
  action?: ReactNode;
  className?: string;
}) {
  return (
    <div
      data-slot="empty-state"
      className={cn("flex flex-col items-center gap-2 rounded-lg border border-dashed p-6 text-center", className)}
    >
      <p className="font-medium">{title}</p>
      {description !== undefined && <p className="max-w-prose text-sm text-muted-foreground">{description}</p>}
      {action !== undefined && <div className="mt-2">{action}</div>}
    </div>
  );
}
