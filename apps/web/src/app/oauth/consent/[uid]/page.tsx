import { redirect } from "next/navigation";
import { currentUser } from "@/server/auth";
import { type ConsentChoices, consentChoices } from "@/server/consent";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ uid: string }>; searchParams: Promise<{ error?: string }> };

/**
 * The OAuth consent screen (CLOUD.md, "OAuth for MCP"): the client and where it sends the user
 * back; one workspace, one group and the tools; allow or deny. A plain form POST to this URL
 * (works without JavaScript); sign-in first when there is no session, then back here.
 */
export default async function ConsentPage({ params, searchParams }: Props) {
  const { uid } = await params;
  const { error } = await searchParams;
  const user = await currentUser();
  if (user === null) redirect(`/sign-in?next=${encodeURIComponent(`/oauth/consent/${uid}`)}`);
  let choices: ConsentChoices;
  try {
    choices = await consentChoices(uid, user.id);
  } catch {
    return (
      <section aria-labelledby="title" className="rounded-lg border bg-white p-6">
        <h1 id="title" className="text-xl font-semibold">
          This request has expired
        </h1>
        <p className="mt-2 text-zinc-600">
          The authorization request is finished or no longer valid. Start again from the app that asked.
        </p>
      </section>
    );
  }
  const { pending, workspaces, tools } = choices;
  const client = pending.client_name ?? pending.client_id;
  return (
    <section aria-labelledby="title" className="rounded-lg border bg-white p-6 shadow-sm">
      <h1 id="title" className="text-xl font-semibold">
        Connect {client}
      </h1>
      <p className="mt-1 text-sm text-zinc-600">
        <span className="font-medium">{client}</span> wants to use Prim data as{" "}
        <span className="font-medium">{user.email}</span>. It will send you back to{" "}
        <span className="font-mono">{choices.redirectHost}</span>.
      </p>
      {error !== undefined && (
        <p
          id="consent-error"
          role="alert"
          className="mt-4 rounded border border-red-300 bg-red-50 p-3 text-sm text-red-800"
        >
          {error}
        </p>
      )}
      {workspaces.length === 0 ? <p className="mt-4">You are not a member of any workspace with data access.</p> : null}
      <form method="post" className="mt-6 space-y-6">
        <div>
          <label htmlFor="workspace" className="block text-sm font-medium">
            Workspace
          </label>
          <select id="workspace" name="workspace" className="mt-1 w-full rounded border p-2" required>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name} ({w.role})
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="group" className="block text-sm font-medium">
            Group
          </label>
          <select id="group" name="group" className="mt-1 w-full rounded border p-2" required>
            {workspaces.map((w) => (
              <optgroup key={w.id} label={w.name}>
                {w.groups.map((g) => (
                  <option key={`${w.id}/${g}`} value={g}>
                    {g}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </div>
        <fieldset>
          <legend className="text-sm font-medium">Tools</legend>
          <p className="text-xs text-zinc-600">primitive_list is always allowed.</p>
          {/* The only way to grant every tool (`*`): the server refuses `*` among the tools (@prim/db consent-form.ts). */}
          <label className="mt-2 flex items-center gap-2 text-sm font-medium">
            <input type="checkbox" name="every_tool" value="yes" /> Every tool, including tools added later
          </label>
          <div className="mt-2 grid grid-cols-1 gap-3 sm:grid-cols-2">
            {tools.map((t) => (
              <div key={t.type} className="rounded border p-2">
                <label className="flex items-center gap-2 text-sm font-medium">
                  <input type="checkbox" name="tools" value={`${t.type}_*`} /> every {t.type} tool ({t.type}_*)
                </label>
                {t.names.map((name) => (
                  <label key={name} className="ml-4 flex items-center gap-2 font-mono text-xs">
                    <input type="checkbox" name="tools" value={name} /> {name}
                  </label>
                ))}
              </div>
            ))}
          </div>
        </fieldset>
        <div className="flex gap-3">
          <button
            type="submit"
            name="action"
            value="allow"
            className="rounded bg-zinc-900 px-4 py-2 text-white focus:outline-none focus:ring-2 focus:ring-zinc-500"
          >
            Allow
          </button>
          <button
            type="submit"
            name="action"
            value="deny"
            formNoValidate
            className="rounded border px-4 py-2 focus:outline-none focus:ring-2 focus:ring-zinc-500"
          >
            Deny
          </button>
        </div>
      </form>
    </section>
  );
}
