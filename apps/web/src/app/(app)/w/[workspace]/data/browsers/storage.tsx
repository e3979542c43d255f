"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { TextField } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";
import { type Props, State, useView } from "./shared";

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
