"use client";
import { useQuery } from "@tanstack/react-query";
import { FolderInputIcon, PencilIcon, Trash2Icon, XIcon } from "lucide-react";
import { ErrorText } from "@/components/status";
import { Button } from "@/components/ui/button";
import { Skeleton } from "@/components/ui/skeleton";
import { formatBytes } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import type { Target, useAct } from "./edit-kit";
import { DeleteEntryDialog, FileEditorDialog, MoveDialog } from "./fs-dialogs";

/**
 * The selected file: text shown (and editable), images shown, binary or large files described;
 * with its actions (edit, move, delete). Closing or deleting it clears the selection.
 */
export function FilePreview(
  props: Target & {
    path: string;
    act: ReturnType<typeof useAct>;
    onClose: () => void;
    onMoved: (to: string) => void;
  },
) {
  const trpc = useTRPC();
  const preview = useQuery({
    ...trpc.primitive.preview.queryOptions({
      workspace: props.workspace,
      primitive: props.primitive,
      path: props.path,
    }),
    retry: false,
  });
  const p = preview.data;
  const name = props.path.split("/").at(-1) ?? props.path;
  const dir = props.path.slice(0, props.path.length - name.length - 1) || "/";
  return (
    <section aria-label={`Preview of ${props.path}`} className="rounded-lg border">
      <header className="flex flex-wrap items-center justify-between gap-2 border-b p-3">
        <div className="min-w-0">
          <h3 className="font-mono text-sm font-medium break-all">{props.path}</h3>
          {p !== undefined && p.kind !== "directory" && (
            <p className="text-xs text-muted-foreground">
              {formatBytes(p.size)} · {p.content_type}
            </p>
          )}
        </div>
        <div className="flex flex-wrap gap-1">
          {p?.kind === "text" && (
            <FileEditorDialog
              act={props.act}
              dir={dir}
              file={{ path: props.path, text: p.text }}
              trigger={
                <Button variant="outline" size="sm">
                  <PencilIcon aria-hidden /> Edit
                </Button>
              }
            />
          )}
          <MoveDialog
            act={props.act}
            path={props.path}
            onMoved={props.onMoved}
            trigger={
              <Button variant="outline" size="sm">
                <FolderInputIcon aria-hidden /> Move
              </Button>
            }
          />
          <DeleteEntryDialog
            act={props.act}
            entry={{ path: props.path, name, type: "file" }}
            onDeleted={props.onClose}
            trigger={
              <Button variant="outline" size="sm">
                <Trash2Icon aria-hidden /> Delete
              </Button>
            }
          />
          <Button variant="ghost" size="sm" onClick={props.onClose} aria-label="Close the preview">
            <XIcon aria-hidden />
          </Button>
        </div>
      </header>
      <div className="p-3 text-sm">
        {preview.isPending && <Skeleton className="h-24" />}
        <ErrorText error={preview.error} />
        {p?.kind === "text" && (
          <pre
            data-testid="file-text"
            className="max-h-96 overflow-auto rounded-md bg-muted p-3 font-mono text-xs leading-5 break-all whitespace-pre-wrap"
          >
            {p.text === "" ? "(empty file)" : p.text}
          </pre>
        )}
        {p?.kind === "image" && (
          // biome-ignore lint/performance/noImgElement: a data URL of the file itself, not an optimisable asset
          <img alt={props.path} src={`data:${p.content_type};base64,${p.base64}`} className="max-h-96 max-w-full" />
        )}
        {p?.kind === "binary" && <p className="text-muted-foreground">Binary file: no preview.</p>}
        {p?.kind === "too_large" && (
          <p className="text-muted-foreground">Too large to preview here (over 256 KiB): read it through the API.</p>
        )}
      </div>
    </section>
  );
}
