import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { ThemeToggle } from "@/components/theme-toggle";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader } from "@/components/ui/card";
import { currentUser } from "@/server/auth";
import { type ConsentChoices, consentChoices } from "@/server/consent";
import { type Picked, ToolPicker } from "./tool-picker";
import { WorkspaceGroup } from "./workspace-group";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Connect an app" };

type Props = { params: Promise<{ uid: string }>; searchParams: Promise<{ error?: string; preset?: string }> };

/** "1 hour", "30 days": a lifetime in seconds, in the largest whole unit. */
function lifetime(seconds: number): string {
  const units: [number, string][] = [
    [86_400, "day"],
    [3600, "hour"],
    [60, "minute"],
  ];
  for (const [size, unit] of units) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${unit}${n === 1 ? "" : "s"}`;
    }
  }
  return `${seconds} seconds`;
}

/** What a preset link (`?preset=`) ticks when the page is rendered (the no-JavaScript path). */
function presetChoice(preset: string | undefined, choices: ConsentChoices): Picked {
  if (preset === "read-only") {
    const tools = choices.sections.flatMap((s) => s.tools.filter((t) => t.access === "read").map((t) => t.name));
    return { tools, types: [], everyTool: false, readOnly: true };
  }
  return { tools: [], types: [], everyTool: preset === "everything", readOnly: false };
}

/**
 * The OAuth consent screen (CLOUD.md, "OAuth for MCP"): the client and where it sends the user
 * back; one workspace, one group and the tools (by type, each read or write, with presets);
 * how long access lasts and how it ends; allow or deny. A plain form POST to this URL (works
 * without JavaScript); sign-in first when there is no session, then back here.
 */
export default async function ConsentPage({ params, searchParams }: Props) {
  const { uid } = await params;
  const { error, preset } = await searchParams;
  const here = `/oauth/consent/${encodeURIComponent(uid)}`;
  const user = await currentUser();
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(`/oauth/consent/${uid}`)}`);
  let choices: ConsentChoices;
  try {
    choices = await consentChoices(uid, user.id);
  } catch {
    return (
      <Frame>
        <Card>
          <CardHeader>
            <h1 className="text-xl font-semibold">This request has expired</h1>
            <CardDescription>
              The authorization request is finished or no longer valid. Start again from the app that asked.
            </CardDescription>
          </CardHeader>
        </Card>
      </Frame>
    );
  }
  const { pending, workspaces, sections, lifetimes } = choices;
  const client = pending.client_name ?? pending.client_id;
  const only = workspaces.length === 1 ? workspaces[0] : undefined;
  return (
    <Frame>
      <Card>
        <CardHeader>
          <h1 className="text-xl font-semibold break-words">Connect {client}</h1>
          <CardDescription>
            <span className="font-medium text-foreground break-words">{client}</span> wants to use Prim data as{" "}
            <span className="font-medium text-foreground break-words">{user.email}</span>. It will send you back to{" "}
            <span className="font-mono text-foreground break-words">{choices.redirectHost}</span>.
          </CardDescription>
        </CardHeader>
        <CardContent>
          {error !== undefined && (
            <p
              id="consent-error"
              role="alert"
              className="mb-4 rounded-md border border-destructive/50 bg-destructive/10 p-3 text-sm text-destructive"
            >
              {error}
            </p>
          )}
          {workspaces.length === 0 ? (
            <p className="mb-4 text-sm">You are not a member of any workspace with data access.</p>
          ) : null}
          <form method="post" action={here} className="space-y-6">
            <WorkspaceGroup workspaces={workspaces} />
            <section aria-labelledby="tools-title" className="space-y-3">
              <div>
                <h2 id="tools-title" className="text-base font-semibold">
                  What it may use
                </h2>
                <p className="text-sm text-muted-foreground">
                  Listing the group's data stores (<code className="font-mono text-xs">primitive_list</code>) is always
                  allowed.
                </p>
              </div>
              <ToolPicker
                sections={sections}
                initial={presetChoice(preset, choices)}
                presets={{ readOnly: `${here}?preset=read-only`, everything: `${here}?preset=everything` }}
              />
            </section>
            <section aria-labelledby="terms-title" className="rounded-md border bg-muted/50 p-3 text-sm">
              <h2 id="terms-title" className="font-semibold">
                How long, and how to stop it
              </h2>
              <ul className="mt-1 list-disc space-y-1 pl-5 text-muted-foreground">
                <li>
                  Access lasts until you disconnect the app. It uses tokens that last{" "}
                  <span className="text-foreground">{lifetime(lifetimes.accessToken)}</span>, renewed with a refresh
                  token that lasts <span className="text-foreground">{lifetime(lifetimes.refreshToken)}</span> (each
                  renewal gives a new one), so an app unused for {lifetime(lifetimes.refreshToken)} must ask again.
                </li>
                <li>
                  Disconnect it on the{" "}
                  {only === undefined ? (
                    "Apps page of the workspace"
                  ) : (
                    <Link href={`/w/${only.id}/apps`} className="text-foreground underline underline-offset-4">
                      Apps page of {only.name}
                    </Link>
                  )}
                  : its tokens stop working at once. To change the group or tools, disconnect and connect again.
                </li>
              </ul>
            </section>
            {/* Allow first: the form's default button (Enter); shown right of Deny on wide screens. */}
            <div className="flex flex-col gap-2 sm:flex-row-reverse">
              <Button type="submit" name="action" value="allow">
                Allow
              </Button>
              <Button type="submit" name="action" value="deny" variant="outline" formNoValidate>
                Deny
              </Button>
            </div>
          </form>
        </CardContent>
      </Card>
    </Frame>
  );
}

/** The page outside the workspace shell: a slim bar with the theme toggle, then the card. */
function Frame({ children }: { children: ReactNode }) {
  return (
    <div className="mx-auto max-w-2xl space-y-4">
      <div className="flex items-center justify-between">
        <span className="text-lg font-semibold tracking-tight">Prim</span>
        <ThemeToggle />
      </div>
      {children}
    </div>
  );
}
