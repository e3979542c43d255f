"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";
import { type Props, State, useView } from "./shared";

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
