import { cn } from "@/lib/utils";
import { CopyButton } from "./copy-button";

/** Preformatted code (scrolls sideways inside itself) with a copy button and an optional label. */
export function CodeBlock({
  code,
  label,
  language,
  className,
}: {
  code: string;
  label?: string;
  language?: string;
  className?: string;
}) {
  return (
    <div data-slot="code-block" className={cn("overflow-hidden rounded-md border bg-muted/50", className)}>
      <div className="flex items-center justify-between gap-2 border-b px-3 py-1.5">
        <span className="truncate text-xs font-medium text-muted-foreground">{label ?? language ?? "Code"}</span>
        <CopyButton value={code} label={label === undefined ? "Copy" : `Copy ${label}`} className="h-7" />
      </div>
      {/* Focusable: a line wider than the block (a key, a URL) scrolls with the keyboard too. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus (WCAG 2.1.1) */}
      <pre tabIndex={0} className="overflow-x-auto p-3 text-xs leading-relaxed">
        <code data-language={language}>{code}</code>
      </pre>
    </div>
  );
}
