import { CopyButton } from "@/components/ui/copy-button";

/** One address of this deployment: its name and a copy button, then the address in full. */
export function Endpoint({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <div className="grid min-w-0 gap-1.5">
      <div className="flex min-w-0 flex-wrap items-center justify-between gap-2">
        <span className="text-sm font-medium">{label}</span>
        <CopyButton value={value} label={`Copy ${label}`} />
      </div>
      <code className="rounded-md border bg-muted/50 px-2 py-1.5 font-mono text-xs break-all">{value}</code>
      {hint !== undefined && <span className="text-xs text-muted-foreground">{hint}</span>}
    </div>
  );
}
