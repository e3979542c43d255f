"use client";
import { useMutation } from "@tanstack/react-query";
import { ChevronRightIcon, DownloadIcon, FileIcon, FolderIcon, InfoIcon, Trash2Icon } from "lucide-react";
import { useDeferredValue, useId, useState } from "react";
import { toast } from "sonner";
import { MoreButton } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { CopyButton } from "@/components/ui/copy-button";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
  DialogTrigger,
} from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Skeleton } from "@/components/ui/skeleton";
import { errorText } from "@/lib/errors";
import { formatBytes, formatDate, formatNumber, formatRelative } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { type Target, useAct, useBrowsePages, useUrlState } from "./edit-kit";
import { StorageUpload } from "./storage-upload";

type ObjectInfo = {
  key: string;
  size: number;
  etag: string;
  content_type: string;
  metadata: Record<string, string>;
  created_at: number;
  updated_at: number;
};

/**
 * A storage primitive's objects by prefix, a "folder" (`/`) at a time (the prefix in the
 * address, `?prefix=`), paged; download through a signed URL, details, delete; upload below.
 */
export function StorageBrowser(props: Target) {
  const trpc = useTRPC();
  const [prefix, setPrefix] = useUrlState("prefix", "");
  const search = useDeferredValue(prefix);
  const prefixId = useId();
  const act = useAct(props);
  const list = useBrowsePages<{ data: ObjectInfo[]; prefixes: string[] }>(props, "storage.list", {
    prefix: search,
    delimiter: "/",
  });
  const objects = list.data?.pages.flatMap((p) => p.data) ?? [];
  const folders = list.data?.pages.flatMap((p) => p.prefixes) ?? [];
  const sign = useMutation(trpc.primitive.sign.mutationOptions());
  async function download(key: string) {
    try {
      const signed = await sign.mutateAsync({ ...props, key, method: "GET" });
      window.open(signed.url, "_blank", "noopener");
    } catch (err) {
      toast.error(errorText(err));
    }
  }
  const dir = search.slice(0, search.lastIndexOf("/") + 1);
  const crumbs = dir.split("/").filter(Boolean);
  return (
    <section aria-label="Objects" className="space-y-4">
      <div className="grid gap-2">
        <Label htmlFor={prefixId}>Prefix</Label>
        <Input
          id={prefixId}
          type="search"
          value={prefix}
          onChange={(e) => setPrefix(e.target.value)}
          placeholder="images/"
          autoComplete="off"
          spellCheck={false}
          className="font-mono"
        />
      </div>
      <nav aria-label="Folder" className="flex flex-wrap items-center gap-1 font-mono text-sm">
        <Button variant="ghost" size="sm" onClick={() => setPrefix("")}>
          (top)
        </Button>
        {crumbs.map((name, i) => {
          const to = `${crumbs.slice(0, i + 1).join("/")}/`;
          return (
            <span key={to} className="flex items-center gap-1">
              <ChevronRightIcon className="size-3 text-muted-foreground" aria-hidden />
              <Button variant="ghost" size="sm" className="max-w-48 truncate" onClick={() => setPrefix(to)}>
                {name}
              </Button>
            </span>
          );
        })}
      </nav>
      {list.isPending && <Skeleton className="h-24" />}
      <ErrorText error={list.error} />
      {list.isSuccess && objects.length === 0 && folders.length === 0 && (
        <EmptyState
          title={search === "" ? "No objects yet" : `Nothing under “${search}”`}
          description="Upload files below, or PUT them through the API."
        />
      )}
      {(objects.length > 0 || folders.length > 0) && (
        <ul className="divide-y rounded-lg border" aria-label={`Objects under ${search || "the top"}`}>
          {folders.map((f) => (
            <li key={f} className="px-3 py-2">
              <Button
                variant="link"
                className="h-auto justify-start p-0 font-mono text-sm break-all whitespace-normal text-foreground"
                onClick={() => setPrefix(f)}
                aria-label={`Open folder ${f}`}
              >
                <FolderIcon className="text-muted-foreground" aria-hidden /> {f.slice(dir.length)}
              </Button>
            </li>
          ))}
          {objects.map((o) => (
            <ObjectRow
              key={o.key}
              object={o}
              name={o.key.slice(dir.length)}
              onDownload={() => void download(o.key)}
              onDelete={() => act.run("storage.delete", { key: o.key }, `Deleted ${o.key}`)}
            />
          ))}
        </ul>
      )}
      {list.isSuccess && (objects.length > 0 || list.hasNextPage) && (
        <div className="flex flex-wrap items-center justify-between gap-2 text-sm text-muted-foreground">
          <span>
            {formatNumber(objects.length)} {objects.length === 1 ? "object" : "objects"} ·{" "}
            {formatBytes(objects.reduce((n, o) => n + o.size, 0))}
            {list.hasNextPage ? " shown (more on the server)" : ""}
          </span>
          <MoreButton query={list} />
        </div>
      )}
      <StorageUpload {...props} prefix={dir} onUploaded={() => void act.refresh()} />
    </section>
  );
}

function ObjectRow(props: {
  object: ObjectInfo;
  name: string;
  onDownload: () => void;
  onDelete: () => Promise<unknown>;
}) {
  const o = props.object;
  return (
    <li className="flex items-center gap-3 px-3 py-2">
      <div className="min-w-0 flex-1">
        <p className="flex items-center gap-2 font-mono text-sm break-all">
          <FileIcon className="size-4 shrink-0 text-muted-foreground" aria-hidden />
          {props.name}
        </p>
        <p className="text-xs text-muted-foreground sm:hidden">
          {formatBytes(o.size)} · {formatRelative(o.updated_at)}
        </p>
      </div>
      <span className="hidden w-20 text-xs text-muted-foreground sm:block">{formatBytes(o.size)}</span>
      <span className="hidden w-28 text-xs text-muted-foreground sm:block" title={formatDate(o.updated_at)}>
        {formatRelative(o.updated_at)}
      </span>
      <span className="flex gap-1">
        <Button variant="ghost" size="sm" onClick={props.onDownload} aria-label={`Download ${o.key}`}>
          <DownloadIcon aria-hidden />
        </Button>
        <ObjectDetails object={o} onDownload={props.onDownload} />
        <ConfirmDialog
          trigger={
            <Button variant="ghost" size="sm" aria-label={`Delete ${o.key}`}>
              <Trash2Icon aria-hidden />
            </Button>
          }
          title={`Delete ${o.key}?`}
          description={`${formatBytes(o.size)} are removed, and signed URLs of this key stop working. This cannot be undone.`}
          confirmLabel="Delete"
          onConfirm={props.onDelete}
        />
      </span>
    </li>
  );
}

function ObjectDetails(props: { object: ObjectInfo; onDownload: () => void }) {
  const o = props.object;
  const [open, setOpen] = useState(false);
  const meta = Object.entries(o.metadata ?? {});
  const rows: [string, string][] = [
    ["Size", `${formatBytes(o.size)} (${formatNumber(o.size)} bytes)`],
    ["Content type", o.content_type],
    ["ETag", o.etag],
    ["Created", formatDate(o.created_at)],
    ["Updated", formatDate(o.updated_at)],
    ...meta.map(([k, v]): [string, string] => [`x-object-meta-${k}`, v]),
  ];
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogTrigger asChild>
        <Button variant="ghost" size="sm" aria-label={`Details of ${o.key}`}>
          <InfoIcon aria-hidden />
        </Button>
      </DialogTrigger>
      <DialogContent>
        <DialogHeader>
          <DialogTitle className="font-mono break-all">{o.key}</DialogTitle>
          <DialogDescription>The object's record.</DialogDescription>
        </DialogHeader>
        <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-2 text-sm">
          {rows.map(([k, v]) => (
            <div key={k} className="contents">
              <dt className="text-muted-foreground">{k}</dt>
              <dd className="font-mono text-xs break-all">{v}</dd>
            </div>
          ))}
        </dl>
        <div className="flex flex-wrap gap-2">
          <Button onClick={props.onDownload}>
            <DownloadIcon aria-hidden /> Download
          </Button>
          <CopyButton value={o.key} label="Copy key" />
        </div>
      </DialogContent>
    </Dialog>
  );
}
