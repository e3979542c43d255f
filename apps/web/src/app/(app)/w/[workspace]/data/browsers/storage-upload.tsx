"use client";
import { UploadIcon } from "lucide-react";
import { type FormEvent, useId, useState } from "react";
import { toast } from "sonner";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Progress } from "@/components/ui/progress";
import { SubmitButton } from "@/components/ui/submit-button";
import { formatBytes } from "@/lib/format";
import type { Target } from "./edit-kit";

type Upload = { key: string; size: number; sent: number; state: "waiting" | "sending" | "done" | "failed" };

/**
 * Files from this computer into the store under a chosen prefix, one after another, each with
 * its progress: the dashboard's /api/storage-upload streams the body on to a signed PUT URL
 * (XMLHttpRequest, for upload progress events).
 */
export function StorageUpload(props: Target & { prefix: string; onUploaded: () => void }) {
  // The target follows the folder being browsed until a prefix is typed here.
  const [typed, setPrefix] = useState<string | null>(null);
  const prefix = typed ?? props.prefix;
  const [files, setFiles] = useState<File[]>([]);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const busy = uploads.some((u) => u.state === "sending" || u.state === "waiting");
  const prefixId = useId();
  const filesId = useId();
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (files.length === 0 || busy) return;
    const form = event.currentTarget;
    const list: Upload[] = files.map((f) => ({ key: `${prefix}${f.name}`, size: f.size, sent: 0, state: "waiting" }));
    setUploads(list);
    const update = (i: number, change: Partial<Upload>) =>
      setUploads((all) => all.map((u, j) => (j === i ? { ...u, ...change } : u)));
    let ok = 0;
    for (const [i, file] of files.entries()) {
      const key = list[i]?.key ?? file.name;
      update(i, { state: "sending" });
      const answer = await send(props, key, file, (sent) => update(i, { sent }));
      if (answer.ok) {
        ok++;
        update(i, { state: "done", sent: file.size });
      } else {
        update(i, { state: "failed" });
        toast.error(`${key}: ${answer.message}`);
      }
      props.onUploaded();
    }
    if (ok > 0) toast.success(ok === 1 ? `Uploaded ${list[0]?.key}` : `Uploaded ${ok} files`);
    setFiles([]);
    form.reset();
  }
  return (
    <form onSubmit={submit} className="grid gap-3 rounded-lg border p-3 sm:p-4" aria-label="Upload">
      <h3 className="font-medium">Upload</h3>
      <div className="grid gap-3 sm:grid-cols-2">
        <div className="grid gap-2">
          <Label htmlFor={prefixId}>To prefix</Label>
          <Input
            id={prefixId}
            value={prefix}
            onChange={(e) => setPrefix(e.target.value)}
            placeholder="(the top)"
            autoComplete="off"
            spellCheck={false}
            className="font-mono"
          />
        </div>
        <div className="grid gap-2">
          <Label htmlFor={filesId}>Files</Label>
          <Input
            id={filesId}
            type="file"
            multiple
            onChange={(e) => setFiles([...(e.target.files ?? [])])}
            className="h-auto py-1.5 file:mr-2 file:rounded file:border-0 file:bg-secondary file:px-2 file:text-secondary-foreground"
          />
        </div>
      </div>
      {files.length > 0 && !busy && (
        <p className="text-xs break-all text-muted-foreground">
          {files.length === 1 ? `As ${prefix}${files[0]?.name}` : `${files.length} files under ${prefix || "the top"}`}{" "}
          · {formatBytes(files.reduce((n, f) => n + f.size, 0))}
        </p>
      )}
      <div>
        <SubmitButton disabled={files.length === 0 || busy} aria-busy={busy}>
          <UploadIcon aria-hidden /> {busy ? "Uploading…" : "Upload"}
        </SubmitButton>
      </div>
      {uploads.length > 0 && (
        <ul className="grid gap-2" aria-label="Uploads">
          {uploads.map((u) => (
            <li key={u.key} className="grid gap-1 text-xs">
              <span className="flex justify-between gap-2">
                <span className="min-w-0 font-mono break-all">{u.key}</span>
                <span className="shrink-0 text-muted-foreground">
                  {u.state === "failed"
                    ? "failed"
                    : u.state === "done"
                      ? "done"
                      : `${formatBytes(u.sent)} / ${formatBytes(u.size)}`}
                </span>
              </span>
              <Progress
                value={u.size === 0 ? (u.state === "done" ? 100 : 0) : (u.sent / u.size) * 100}
                aria-label={`Upload of ${u.key}`}
              />
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}

/** One file to /api/storage-upload, progress reported; the answer's error code and message on failure. */
function send(
  target: Target,
  key: string,
  file: File,
  progress: (sent: number) => void,
): Promise<{ ok: true } | { ok: false; message: string }> {
  return new Promise((resolve) => {
    const query = new URLSearchParams({ workspace: target.workspace, primitive: target.primitive, key });
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/storage-upload?${query}`);
    xhr.setRequestHeader("content-type", file.type || "application/octet-stream");
    xhr.upload.onprogress = (e) => progress(e.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve({ ok: true });
      let message = `HTTP ${xhr.status}`;
      try {
        const body = JSON.parse(xhr.responseText) as { error?: { code?: string; message?: string } };
        if (body.error !== undefined) message = `${body.error.code}: ${body.error.message}`;
      } catch {
        // not JSON: the status says it
      }
      resolve({ ok: false, message });
    };
    xhr.onerror = () => resolve({ ok: false, message: "the upload did not reach the dashboard" });
    xhr.send(file);
  });
}
