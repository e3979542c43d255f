"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { TextField } from "@/components/fields";
import { ErrorText, QueryState } from "@/components/status";
import { useTRPC } from "@/lib/trpc";
import type { BrowseView } from "@/server/trpc/routers/primitive";

type Props = { workspace: string; primitive: string };

/** A view's answer (`{ data: [...] }` pages), loading and error states included. */
function useView<T>(props: Props, view: BrowseView, args: Record<string, unknown> = {}, enabled = true) {
  const trpc = useTRPC();
  return useQuery({
    ...trpc.primitive.browse.queryOptions({ ...props, view, args }),
    enabled,
    select: (answer: unknown) => answer as { data: T[] },
  });
}

function State(props: {
  query: { isPending: boolean; error: { message: string } | null; data?: { data: unknown[] } };
  empty: string;
}) {
  const { query } = props;
  return (
    <QueryState
      query={{ isPending: query.isPending, error: query.error, data: query.data?.data }}
      empty={props.empty}
    />
  );
}

/** Queues with their counts by status; a queue's dead jobs, requeued one by one. */
export function QueueBrowser(props: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [queue, setQueue] = useState<string | null>(null);
  const queues = useView<{ name: string; ready: number; leased: number; done: number; dead: number }>(
    props,
    "queue.queues",
  );
  const dead = useView<{ id: string; attempts: number; last_error?: string | null }>(
    props,
    "queue.messages",
    { queue, status: "dead" },
    queue !== null,
  );
  const requeue = useMutation(
    trpc.primitive.requeue.mutationOptions({
      onSuccess: () => void queryClient.invalidateQueries({ queryKey: trpc.primitive.browse.pathKey() }),
    }),
  );
  return (
    <div className="mt-4 text-sm">
      <h3 className="font-medium">Queues</h3>
      <State query={queues} empty="No queues yet." />
      <ul>
        {queues.data?.data.map((q) => (
          <li key={q.name}>
            <button type="button" className="underline" onClick={() => setQueue(q.name)}>
              {q.name}
            </button>{" "}
            <span className="text-zinc-600">
              ready {q.ready} · leased {q.leased} · done {q.done} · dead {q.dead}
            </span>
          </li>
        ))}
      </ul>
      {queue !== null && (
        <>
          <h3 className="mt-3 font-medium">Dead jobs in {queue}</h3>
          <State query={dead} empty="No dead jobs." />
          <ul>
            {dead.data?.data.map((j) => (
              <li key={j.id} className="flex items-center justify-between py-1">
                <span className="font-mono">
                  {j.id} {j.last_error ?? ""}
                </span>
                <button
                  type="button"
                  className="rounded border px-2 py-0.5"
                  onClick={() => requeue.mutate({ ...props, queue, job: j.id })}
                >
                  Requeue
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/** Secret names and versions, and grants: never a value. */
export function VaultBrowser(props: Props) {
  const secrets = useView<{ name: string; version?: number; updated_at?: number }>(props, "vault.list");
  const grants = useView<{ name: string; hosts?: string[]; methods?: string[] }>(props, "vault.grants");
  return (
    <div className="mt-4 text-sm">
      <h3 className="font-medium">Secrets (names only)</h3>
      <State query={secrets} empty="No secrets." />
      <ul>
        {secrets.data?.data.map((s) => (
          <li key={s.name} className="font-mono">
            {s.name} <span className="text-zinc-600">v{s.version ?? 1}</span>
          </li>
        ))}
      </ul>
      <h3 className="mt-3 font-medium">Grants</h3>
      <State query={grants} empty="No grants." />
      <ul>
        {grants.data?.data.map((g) => (
          <li key={g.name} className="font-mono">
            {g.name} <span className="text-zinc-600">{(g.hosts ?? []).join(", ")}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Recall: the memories that answer a query, best first. */
export function MemoryBrowser(props: Props) {
  const [query, setQuery] = useState("");
  const [asked, setAsked] = useState<string | null>(null);
  const found = useView<{ id: string; text: string; score: number }>(
    props,
    "memory.recall",
    { query: asked },
    asked !== null,
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (query.trim() !== "") setAsked(query.trim());
  }
  return (
    <div className="mt-4 text-sm">
      <form onSubmit={submit} className="flex items-end gap-2">
        <TextField label="Recall" value={query} onChange={setQuery} className="flex-1" />
        <button type="submit" className="rounded border px-2 py-1">
          Search
        </button>
      </form>
      {asked !== null && <State query={found} empty="Nothing recalled." />}
      <ul className="mt-2 divide-y">
        {found.data?.data.map((m) => (
          <li key={m.id} className="py-1">
            {m.text} <span className="text-zinc-600">({m.score.toFixed(2)})</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A directory's entries, walked by clicking folders; a file clicked is previewed below. */
export function FsBrowser(props: Props) {
  const [path, setPath] = useState("/");
  const [file, setFile] = useState<string | null>(null);
  const entries = useView<{ name: string; path?: string; type?: string; size?: number }>(props, "fs.list", { path });
  const up = path === "/" ? null : path.replace(/\/[^/]+\/?$/, "") || "/";
  const join = (name: string) => `${path.replace(/\/$/, "")}/${name}`;
  return (
    <div className="mt-4 text-sm">
      <h3 className="font-medium">
        Files in <span className="font-mono">{path}</span>
      </h3>
      {up !== null && (
        <button type="button" className="underline" onClick={() => setPath(up)}>
          ..
        </button>
      )}
      <State query={entries} empty="Empty directory." />
      <ul>
        {entries.data?.data.map((e) => (
          <li key={e.name} className="font-mono">
            <button
              type="button"
              className="underline"
              aria-label={e.type === "dir" ? `Open folder ${e.name}` : `Preview ${e.name}`}
              onClick={() => (e.type === "dir" ? setPath(join(e.name)) : setFile(join(e.name)))}
            >
              {e.type === "dir" ? `${e.name}/` : e.name}
            </button>{" "}
            {e.type !== "dir" && <span className="text-zinc-600">{e.size ?? ""}</span>}
          </li>
        ))}
      </ul>
      {file !== null && <FilePreview {...props} path={file} />}
    </div>
  );
}

function FilePreview(props: Props & { path: string }) {
  const trpc = useTRPC();
  const preview = useQuery(trpc.primitive.preview.queryOptions(props));
  const p = preview.data;
  return (
    <section aria-label={`Preview of ${props.path}`} className="mt-3 rounded border p-2">
      <h4 className="break-all font-mono font-medium">{props.path}</h4>
      {preview.isPending && <p className="text-zinc-600">Loading…</p>}
      <ErrorText error={preview.error} />
      {p !== undefined && p.kind !== "directory" && (
        <p className="text-zinc-600">
          {p.size} bytes · {p.content_type}
        </p>
      )}
      {p?.kind === "text" && (
        <pre data-testid="file-text" className="mt-1 max-h-96 overflow-auto whitespace-pre-wrap break-all font-mono">
          {p.text}
        </pre>
      )}
      {p?.kind === "image" && (
        // biome-ignore lint/performance/noImgElement: a data URL of the file itself, not an optimisable asset
        <img alt={props.path} src={`data:${p.content_type};base64,${p.base64}`} className="mt-1 max-h-96 max-w-full" />
      )}
      {p?.kind === "binary" && <p>Binary file: no preview.</p>}
      {p?.kind === "too_large" && <p>Too large to preview here (over 256 KiB).</p>}
    </section>
  );
}

/** Objects by prefix; download through a signed URL; upload a file through one. */
export function StorageBrowser(props: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [prefix, setPrefix] = useState("");
  const objects = useView<{ key: string; size?: number }>(props, "storage.list", { prefix });
  const sign = useMutation(trpc.primitive.sign.mutationOptions());
  const [status, setStatus] = useState<string | null>(null);
  async function upload(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const file = (new FormData(event.currentTarget).get("file") as File | null) ?? null;
    if (file === null || file.name === "") return;
    const key = `${prefix}${file.name}`;
    const query = new URLSearchParams({ workspace: props.workspace, primitive: props.primitive, key });
    const res = await fetch(`/api/storage-upload?${query}`, { method: "POST", body: file });
    setStatus(res.ok ? `Uploaded ${key}` : `Upload failed (${res.status})`);
    void queryClient.invalidateQueries({ queryKey: trpc.primitive.browse.pathKey() });
  }
  async function download(key: string) {
    const signed = await sign.mutateAsync({ ...props, key, method: "GET" });
    window.open(signed.url, "_blank", "noopener");
  }
  return (
    <div className="mt-4 text-sm">
      <TextField label="Prefix" value={prefix} onChange={setPrefix} mono />
      <State query={objects} empty="No objects." />
      <ul className="mt-2">
        {objects.data?.data.map((o) => (
          <li key={o.key} className="flex items-center justify-between gap-2 py-1 font-mono">
            <span className="min-w-0 break-all">
              {o.key} <span className="text-zinc-600">{o.size ?? ""}</span>
            </span>
            <button type="button" className="rounded border px-2 py-0.5" onClick={() => void download(o.key)}>
              Download
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={upload} className="mt-2 flex flex-wrap items-end gap-2">
        <label className="min-w-0 max-w-full">
          Upload a file
          <input name="file" type="file" className="mt-1 block w-full max-w-full" />
        </label>
        <button type="submit" className="rounded border px-2 py-1">
          Upload
        </button>
      </form>
      {status !== null && <p role="status">{status}</p>}
      <ErrorText error={sign.error} />
    </div>
  );
}
