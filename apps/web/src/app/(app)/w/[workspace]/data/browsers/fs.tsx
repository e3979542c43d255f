"use client";
import {
  ChevronRightIcon,
  FileIcon,
  FilePlusIcon,
  FolderIcon,
  FolderInputIcon,
  FolderPlusIcon,
  Trash2Icon,
  UploadIcon,
} from "lucide-react";
import { type ChangeEvent, useRef, useState } from "react";
import { toast } from "sonner";
import { ErrorText } from "@/components/status";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { formatBytes, formatDate, formatRelative } from "@/lib/format";
import { cn } from "@/lib/utils";
import { type Target, useAct, useBrowse, useUrlState } from "./edit-kit";
import { DeleteEntryDialog, FileEditorDialog, joinPath, MoveDialog, NewFolderDialog } from "./fs-dialogs";
import { FilePreview } from "./fs-preview";

type Entry = { path: string; name: string; type: "file" | "dir"; size: number; mtime: number };

/** The most a file uploaded from the browser holds (the server's WRITE_BYTES). */
const UPLOAD_BYTES = 10 * 1024 * 1024;

/**
 * An fs primitive's tree, a folder at a time (in the address, `?path=`): new folder, new or
 * edited text file, upload, move/rename and delete; a file clicked is previewed below.
 */
export function FsBrowser(props: Target) {
  const [dir, setDir] = useUrlState("path", "/");
  const [file, setFile] = useState<string | null>(null);
  const act = useAct(props);
  const list = useBrowse<{ data: Entry[]; truncated?: boolean }>(props, "fs.list", { path: dir });
  const entries = [...(list.data?.data ?? [])].sort((a, b) =>
    a.type === b.type ? a.name.localeCompare(b.name) : a.type === "dir" ? -1 : 1,
  );
  const crumbs = dir === "/" ? [] : dir.split("/").filter(Boolean);
  function openDir(path: string) {
    setDir(path);
    setFile(null);
  }
  return (
    <section aria-label="Files" className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <nav aria-label="Folder" className="flex min-w-0 flex-wrap items-center gap-1 font-mono text-sm">
          <Button
            variant="ghost"
            size="sm"
            onClick={() => openDir("/")}
            aria-current={dir === "/" ? "page" : undefined}
          >
            /
          </Button>
          {crumbs.map((name, i) => {
            const path = `/${crumbs.slice(0, i + 1).join("/")}`;
            return (
              <span key={path} className="flex min-w-0 items-center gap-1">
                <ChevronRightIcon className="size-3 text-muted-foreground" aria-hidden />
                <Button
                  variant="ghost"
                  size="sm"
                  className="max-w-48 truncate"
                  onClick={() => openDir(path)}
                  aria-current={path === dir ? "page" : undefined}
                >
                  {name}
                </Button>
              </span>
            );
          })}
        </nav>
        <div className="flex flex-wrap gap-2">
          <NewFolderDialog
            act={act}
            dir={dir}
            trigger={
              <Button variant="outline" size="sm">
                <FolderPlusIcon aria-hidden /> New folder
              </Button>
            }
          />
          <FileEditorDialog
            act={act}
            dir={dir}
            onSaved={setFile}
            trigger={
              <Button variant="outline" size="sm">
                <FilePlusIcon aria-hidden /> New file
              </Button>
            }
          />
          <UploadButton act={act} dir={dir} onUploaded={setFile} />
        </div>
      </div>
      {list.isPending && (
        <div className="space-y-2" aria-busy="true">
          <Skeleton className="h-10" />
          <Skeleton className="h-10" />
        </div>
      )}
      <ErrorText error={list.error} />
      {list.isSuccess && entries.length === 0 && (
        <EmptyState
          title={dir === "/" ? "No files yet" : "This folder is empty"}
          description="Create a file or a folder, or upload one from your computer."
        />
      )}
      {entries.length > 0 && (
        <ul aria-label={`Entries of ${dir}`} className="divide-y rounded-lg border">
          {entries.map((e) => {
            const path = joinPath(dir, e.name);
            return (
              <li key={e.name} className={cn("flex items-center gap-3 px-3 py-2", file === path && "bg-muted")}>
                <div className="min-w-0 flex-1">
                  <Button
                    variant="link"
                    className="h-auto max-w-full justify-start p-0 text-left font-mono text-sm break-all whitespace-normal text-foreground"
                    onClick={() => (e.type === "dir" ? openDir(path) : setFile(path))}
                    aria-label={e.type === "dir" ? `Open folder ${e.name}` : `Preview ${e.name}`}
                  >
                    {e.type === "dir" ? (
                      <FolderIcon className="text-muted-foreground" aria-hidden />
                    ) : (
                      <FileIcon className="text-muted-foreground" aria-hidden />
                    )}
                    {e.type === "dir" ? `${e.name}/` : e.name}
                  </Button>
                  <p className="text-xs text-muted-foreground sm:hidden">
                    {e.type === "dir" ? "folder" : formatBytes(e.size)} · {formatRelative(e.mtime)}
                  </p>
                </div>
                <span className="hidden w-20 text-xs text-muted-foreground sm:block">
                  {e.type === "dir" ? "" : formatBytes(e.size)}
                </span>
                <span className="hidden w-28 text-xs text-muted-foreground sm:block" title={formatDate(e.mtime)}>
                  {formatRelative(e.mtime)}
                </span>
                <span className="flex gap-1">
                  <MoveDialog
                    act={act}
                    path={path}
                    onMoved={(to) => file !== null && within(file, path) && setFile(to + file.slice(path.length))}
                    trigger={
                      <Button variant="ghost" size="sm" aria-label={`Move ${e.name}`}>
                        <FolderInputIcon aria-hidden />
                      </Button>
                    }
                  />
                  <DeleteEntryDialog
                    act={act}
                    entry={{ path, name: e.name, type: e.type }}
                    onDeleted={() => file !== null && within(file, path) && setFile(null)}
                    trigger={
                      <Button variant="ghost" size="sm" aria-label={`Delete ${e.name}`}>
                        <Trash2Icon aria-hidden />
                      </Button>
                    }
                  />
                </span>
              </li>
            );
          })}
        </ul>
      )}
      {list.data?.truncated === true && (
        <p className="text-sm text-muted-foreground">Only the first entries of this folder are shown.</p>
      )}
      {file !== null && (
        <FilePreview {...props} key={file} path={file} act={act} onClose={() => setFile(null)} onMoved={setFile} />
      )}
    </section>
  );
}

/** Files from this computer written into `dir` (each at most 10 MiB; base64 through act). */
function UploadButton(props: { act: ReturnType<typeof useAct>; dir: string; onUploaded: (path: string) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState<string | null>(null);
  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const files = [...(event.target.files ?? [])];
    event.target.value = "";
    let last: string | null = null;
    for (const [i, f] of files.entries()) {
      const path = joinPath(props.dir, f.name);
      if (f.size > UPLOAD_BYTES) {
        toast.error(
          `${f.name} is ${formatBytes(f.size)}: the dashboard uploads at most 10 MiB (use the API or the CLI)`,
        );
        continue;
      }
      setBusy(files.length > 1 ? `${i + 1}/${files.length}` : "…");
      try {
        await props.act.run("fs.write", { path, base64: await base64Of(f) }, `Uploaded ${path}`);
        last = path;
      } catch {
        // toasted; the next file still goes
      }
    }
    setBusy(null);
    if (last !== null) props.onUploaded(last);
  }
  return (
    <>
      <input
        ref={input}
        type="file"
        multiple
        className="sr-only"
        tabIndex={-1}
        aria-label="Files to upload"
        onChange={(e) => void upload(e)}
      />
      <Button variant="outline" size="sm" onClick={() => input.current?.click()} disabled={busy !== null}>
        <UploadIcon aria-hidden /> {busy === null ? "Upload" : `Uploading ${busy}`}
      </Button>
    </>
  );
}

/** `file` is `path` or inside it. */
function within(file: string, path: string): boolean {
  return file === path || file.startsWith(`${path}/`);
}

async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
