"use client";
import { MonitorIcon, MoonIcon, SunIcon } from "lucide-react";
import { useEffect, useState } from "react";
import { applyTheme, readTheme, type Theme } from "@/lib/theme";
import { cn } from "@/lib/utils";

const OPTIONS: { value: Theme; label: string; Icon: typeof SunIcon }[] = [
  { value: "system", label: "System", Icon: MonitorIcon },
  { value: "light", label: "Light", Icon: SunIcon },
  { value: "dark", label: "Dark", Icon: MoonIcon },
];

/** System / Light / Dark as three toggle buttons (the pressed one is the choice); the choice is kept in localStorage. */
export function ThemeToggle({ className }: { className?: string }) {
  const [theme, setTheme] = useState<Theme | null>(null);
  useEffect(() => setTheme(readTheme()), []);
  return (
    <fieldset
      aria-label="Theme"
      className={cn("m-0 inline-flex min-w-0 rounded-md border bg-background p-0.5", className)}
    >
      {OPTIONS.map(({ value, label, Icon }) => (
        <button
          key={value}
          type="button"
          aria-pressed={theme === value}
          // Enabled once hydrated: a click before would be lost (and tests wait for it).
          disabled={theme === null}
          aria-label={label}
          title={label}
          onClick={() => {
            applyTheme(value);
            setTheme(value);
          }}
          className={cn(
            "inline-flex size-7 items-center justify-center rounded-sm text-muted-foreground outline-none hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring",
            theme === value && "bg-muted text-foreground",
          )}
        >
          <Icon className="size-4" aria-hidden />
        </button>
      ))}
    </fieldset>
  );
}
