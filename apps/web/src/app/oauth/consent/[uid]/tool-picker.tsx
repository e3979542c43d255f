"use client";
import { ChevronRightIcon, EyeIcon, PencilIcon } from "lucide-react";
import { type MouseEvent, useEffect, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { buttonVariants } from "@/components/ui/button";
import { cn } from "@/lib/utils";
import type { ConsentTool, ToolSection } from "@/server/consent";

/**
 * What is ticked: tool names, types whose select-all is ticked (posted as `<type>_*`), every
 * tool, and read-only (posted as `read_only`: the connection can only read, whatever its tools).
 */
export interface Picked {
  tools: string[];
  types: string[];
  everyTool: boolean;
  readOnly: boolean;
}

interface Props {
  sections: ToolSection[];
  initial: Picked;
  /** The presets as links (`?preset=…`): without JavaScript the server renders them ticked. */
  presets: { readOnly: string; everything: string };
}

const box = "mt-0.5 size-4 shrink-0 accent-primary";

/**
 * The tools part of the consent form: presets, "every tool", and one collapsible section per
 * type with its select-all (`<type>_*`, tools of the type added later included) and each tool's
 * title, one line and Read/Write. Native checkboxes in `<details>`, so the form posts the same
 * fields (CLOUD.md, "Dashboard routes") with or without JavaScript; with it, the presets and
 * select-alls tick the boxes in place.
 */
export function ToolPicker({ sections, initial, presets }: Props) {
  const [tools, setTools] = useState(() => new Set(initial.tools));
  const [types, setTypes] = useState(() => new Set(initial.types));
  const [everyTool, setEveryTool] = useState(initial.everyTool);
  const [readOnly, setReadOnly] = useState(initial.readOnly);
  // Without JavaScript nothing could enable them again, so the types stand aside only with it.
  const [scripted, setScripted] = useState(false);
  useEffect(() => setScripted(true), []);
  const readTools = sections.flatMap((s) => s.tools.filter((t) => t.access === "read").map((t) => t.name));

  const preset = (apply: () => void) => (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    apply();
  };
  const readOnlyPreset = preset(() => {
    setTools(new Set(readTools));
    setTypes(new Set());
    setEveryTool(false);
    setReadOnly(true);
  });
  const everything = preset(() => {
    setEveryTool(true);
    setReadOnly(false);
  });

  const toggleTool = (section: ToolSection, name: string, on: boolean) => {
    setTools((prev) => {
      const next = new Set(prev);
      if (on) next.add(name);
      else next.delete(name);
      return next;
    });
    // Unticking one tool of a type ticked whole: the type is no longer whole.
    if (!on && types.has(section.type)) {
      setTypes((prev) => new Set([...prev].filter((t) => t !== section.type)));
    }
  };
  const toggleType = (section: ToolSection, on: boolean) => {
    setTypes((prev) => {
      const next = new Set(prev);
      if (on) next.add(section.type);
      else next.delete(section.type);
      return next;
    });
    setTools((prev) => {
      const next = new Set(prev);
      for (const tool of section.tools) {
        if (on) next.add(tool.name);
        else next.delete(tool.name);
      }
      return next;
    });
  };

  return (
    <div className="space-y-4">
      <div>
        <p className="text-sm font-medium">Quick choices</p>
        <div className="mt-2 grid grid-cols-1 gap-2 sm:grid-cols-2">
          <a
            href={presets.readOnly}
            onClick={readOnlyPreset}
            className={cn(buttonVariants({ variant: "outline" }), "h-auto flex-col items-start gap-0.5 py-2 text-left")}
          >
            <span>Read-only</span>
            <span className="whitespace-normal text-xs font-normal text-muted-foreground">
              Ticks every tool that only reads ({readTools.length} tools) and read-only below
            </span>
          </a>
          <a
            href={presets.everything}
            onClick={everything}
            className={cn(buttonVariants({ variant: "outline" }), "h-auto flex-col items-start gap-0.5 py-2 text-left")}
          >
            <span>Everything in this group</span>
            <span className="whitespace-normal text-xs font-normal text-muted-foreground">
              Every tool, reading and writing, now and later
            </span>
          </a>
        </div>
      </div>

      {/* The only way to grant every tool (`*`): the server refuses `*` among the tools (@prim/db consent-form.ts). */}
      <label className="flex items-start gap-3 rounded-md border bg-muted/50 p-3 text-sm">
        <input
          type="checkbox"
          name="every_tool"
          value="yes"
          className={box}
          checked={everyTool}
          onChange={(e) => setEveryTool(e.target.checked)}
        />
        <span>
          <span className="font-medium">Every tool, including tools added later</span>
          <span className="block text-muted-foreground">
            Everything in this group: reading, writing, deleting and requests with its secrets.
          </span>
        </span>
      </label>

      {/* Enforced by the engine on every call (each operation declares whether it writes), not by the tools ticked. */}
      <label className="flex items-start gap-3 rounded-md border bg-muted/50 p-3 text-sm">
        <input
          type="checkbox"
          name="read_only"
          className={box}
          checked={readOnly}
          onChange={(e) => setReadOnly(e.target.checked)}
        />
        <span>
          <span className="font-medium">Read-only: the app can only read, whatever tools it has</span>
          <span className="block text-muted-foreground">
            Every call that would write, delete or send is refused, even through a tool ticked below.
          </span>
        </span>
      </label>

      <fieldset disabled={everyTool && scripted} className="space-y-2 disabled:opacity-60">
        <legend className="sr-only">Tools by type</legend>
        {everyTool && scripted ? <p className="text-sm text-muted-foreground">Every tool is chosen above.</p> : null}
        {sections.map((section) => {
          const chosen = section.tools.filter((t) => tools.has(t.name)).length;
          const reads = section.tools.filter((t) => t.access === "read").length;
          const whole = types.has(section.type);
          return (
            <details
              key={section.type}
              open={initial.types.includes(section.type) || section.tools.some((t) => initial.tools.includes(t.name))}
              className="group rounded-md border"
            >
              <summary className="flex cursor-pointer list-none items-center gap-2 rounded-md px-3 py-2.5 text-sm hover:bg-accent [&::-webkit-details-marker]:hidden">
                <ChevronRightIcon aria-hidden className="size-4 shrink-0 transition-transform group-open:rotate-90" />
                <span className="font-medium">{section.label}</span>
                <span className="ml-auto text-right text-xs text-muted-foreground">
                  {whole ? "all, and later ones" : `${chosen} of ${section.tools.length} chosen`}
                  <span className="sr-only">
                    {" "}
                    ({reads} read, {section.tools.length - reads} write)
                  </span>
                </span>
              </summary>
              <div className="space-y-1 border-t px-3 py-2">
                <label className="flex items-start gap-3 py-1.5 text-sm">
                  <input
                    type="checkbox"
                    name="tools"
                    value={`${section.type}_*`}
                    className={box}
                    checked={whole}
                    onChange={(e) => toggleType(section, e.target.checked)}
                  />
                  <span>
                    <span className="font-medium">All {section.label.toLowerCase()} tools</span>{" "}
                    <code className="font-mono text-xs text-muted-foreground">{section.type}_*</code>
                    <span className="block text-muted-foreground">Including tools of this type added later.</span>
                  </span>
                </label>
                {section.tools.map((tool) => (
                  <ToolRow
                    key={tool.name}
                    tool={tool}
                    checked={tools.has(tool.name)}
                    onChange={(on) => toggleTool(section, tool.name, on)}
                  />
                ))}
              </div>
            </details>
          );
        })}
      </fieldset>
    </div>
  );
}

function ToolRow({
  tool,
  checked,
  onChange,
}: {
  tool: ConsentTool;
  checked: boolean;
  onChange: (on: boolean) => void;
}) {
  const id = `tool-${tool.name}`;
  return (
    <div className="flex items-start gap-3 border-t border-dashed py-2 first:border-t-0">
      <input
        type="checkbox"
        id={id}
        name="tools"
        value={tool.name}
        className={box}
        checked={checked}
        onChange={(e) => onChange(e.target.checked)}
        aria-describedby={`${id}-summary`}
      />
      <div className="min-w-0 flex-1">
        <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
          <label htmlFor={id} className="text-sm font-medium">
            {tool.title} <code className="font-mono text-xs font-normal text-muted-foreground">{tool.name}</code>
          </label>
          <AccessBadge access={tool.access} />
        </div>
        <p id={`${id}-summary`} className="text-sm text-muted-foreground">
          {tool.summary}
        </p>
      </div>
    </div>
  );
}

/** Read or Write, as the tool's operations declare (@prim/wire's catalog, checked in @prim/mcp). */
export function AccessBadge({ access }: { access: "read" | "write" }) {
  return access === "read" ? (
    <Badge variant="secondary">
      <EyeIcon aria-hidden /> Read
    </Badge>
  ) : (
    <Badge variant="warning">
      <PencilIcon aria-hidden /> Write
    </Badge>
  );
}
