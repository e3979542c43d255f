"use client";
import { type FormEvent, type ReactNode, useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { Checkbox } from "@/components/ui/checkbox";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
  DialogTrigger,
} from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SubmitButton } from "@/components/ui/submit-button";
import { Textarea } from "@/components/ui/textarea";
import { errorCode } from "@/lib/errors";
import { Field, type useAct } from "./edit-kit";

type Act = ReturnType<typeof useAct>;

/** `name` in directory `dir` (`/` joined once). */
export function joinPath(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, "")}/${name.replace(/^\/+/, "")}`;
}

/** A dialog with one form: `submit` resolves to close it (an error keeps it open, toasted). */
function FormDialog(props: {
  trigger: ReactNode;
  title: string;
  description: string;
  submitLabel: string;
  ready: boolean;
  act: Act;
  submit: () => Promise<unknown>;
  onOpen?: () => void;
  children: ReactNode;
  wide?: boolean;
}) {
  const [open, setOpen] = useState(false);
  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!props.ready || props.act.pending) return;
    try {
      await props.submit();
      setOpen(false);
    } catch {
      // toasted by useAct; the form stays as typed
    }
  }
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        if (props.act.pending) return;
        if (next) props.onOpen?.();
        setOpen(next);
      }}
    >
      <DialogTrigger asChild>{props.trigger}</DialogTrigger>
      <DialogContent className={props.wide === true ? "sm:max-w-3xl" : undefined}>
        <form onSubmit={onSubmit} className="grid gap-4">
          <DialogHeader>
            <DialogTitle>{props.title}</DialogTitle>
            <DialogDescription>{props.description}</DialogDescription>
          </DialogHeader>
          {props.children}
          <DialogFooter>
            <Button variant="outline" onClick={() => setOpen(false)} disabled={props.act.pending}>
              Cancel
            </Button>
            <SubmitButton disabled={!props.ready || props.act.pending} aria-busy={props.act.pending}>
              {props.act.pending ? `${props.submitLabel}…` : props.submitLabel}
            </SubmitButton>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}

const NAME_OK = /^[^/]+(\/[^/]+)*$/;

/** A new folder in `dir` (fs.mkdir; parents are made as needed). */
export function NewFolderDialog(props: { act: Act; dir: string; trigger: ReactNode }) {
  const [name, setName] = useState("");
  return (
    <FormDialog
      trigger={props.trigger}
      title="New folder"
      description={`In ${props.dir}`}
      submitLabel="Create folder"
      ready={NAME_OK.test(name)}
      act={props.act}
      onOpen={() => setName("")}
      submit={() => props.act.run("fs.mkdir", { path: joinPath(props.dir, name) }, `Created ${name}/`)}
    >
      <Field label="Folder name">
        {(id) => (
          <Input
            id={id}
            value={name}
            onChange={(e) => setName(e.target.value)}
            autoFocus
            autoComplete="off"
            className="font-mono"
          />
        )}
      </Field>
    </FormDialog>
  );
}

/**
 * Write a text file: a new one in `dir` (its name typed), or `file` edited (its text loaded by
 * the caller). fs.write replaces the whole file.
 */
export function FileEditorDialog(props: {
  act: Act;
  dir: string;
  file?: { path: string; text: string };
  trigger: ReactNode;
  onSaved?: (path: string) => void;
}) {
  const [name, setName] = useState("");
  const [text, setText] = useState("");
  const editing = props.file !== undefined;
  const path = props.file?.path ?? joinPath(props.dir, name);
  return (
    <FormDialog
      wide
      trigger={props.trigger}
      title={editing ? `Edit ${props.file?.path}` : "New file"}
      description={editing ? "Saving replaces the file's contents." : `A text file in ${props.dir}`}
      submitLabel={editing ? "Save" : "Create file"}
      ready={editing || NAME_OK.test(name)}
      act={props.act}
      onOpen={() => {
        setName("");
        setText(props.file?.text ?? "");
      }}
      submit={async () => {
        await props.act.run("fs.write", { path, text }, `Saved ${path}`);
        props.onSaved?.(path);
      }}
    >
      {!editing && (
        <Field label="File name">
          {(id) => (
            <Input
              id={id}
              value={name}
              onChange={(e) => setName(e.target.value)}
              placeholder="notes.md"
              autoFocus
              autoComplete="off"
              className="font-mono"
            />
          )}
        </Field>
      )}
      <Field label="Contents">
        {(id) => (
          <Textarea
            id={id}
            value={text}
            onChange={(e) => setText(e.target.value)}
            rows={14}
            spellCheck={false}
            autoFocus={editing}
            className="max-h-[55vh] font-mono text-xs leading-5"
          />
        )}
      </Field>
    </FormDialog>
  );
}

/** Rename or move an entry (fs.move): the new full path; overwrite a file in the way if asked. */
export function MoveDialog(props: { act: Act; path: string; trigger: ReactNode; onMoved: (to: string) => void }) {
  const [to, setTo] = useState(props.path);
  const [overwrite, setOverwrite] = useState(false);
  const overwriteId = useId();
  return (
    <FormDialog
      trigger={props.trigger}
      title={`Move or rename ${props.path}`}
      description="The new full path; missing folders are not created (make them first)."
      submitLabel="Move"
      ready={to.startsWith("/") && to !== props.path && to.length > 1}
      act={props.act}
      onOpen={() => {
        setTo(props.path);
        setOverwrite(false);
      }}
      submit={async () => {
        await props.act.run("fs.move", { from: props.path, to, overwrite }, `Moved to ${to}`);
        props.onMoved(to);
      }}
    >
      <Field label="New path">
        {(id) => (
          <Input
            id={id}
            value={to}
            onChange={(e) => setTo(e.target.value)}
            autoFocus
            autoComplete="off"
            spellCheck={false}
            className="font-mono"
          />
        )}
      </Field>
      <div className="flex items-center gap-2">
        <Checkbox
          id={`${props.path}-overwrite`}
          checked={overwrite}
          onCheckedChange={(v) => setOverwrite(v === true)}
        />
        <Label htmlFor={overwriteId}>Replace a file already at the new path</Label>
      </div>
    </FormDialog>
  );
}

/**
 * Delete a file or folder. A folder is deleted as is first; when it is not empty (409
 * `fs_conflict`) the dialog says so and asks for its name to delete it with everything in it.
 */
export function DeleteEntryDialog(props: {
  act: Act;
  entry: { path: string; name: string; type: "file" | "dir" };
  trigger: ReactNode;
  onDeleted: () => void;
}) {
  const [recursive, setRecursive] = useState(false);
  const { entry } = props;
  const folder = entry.type === "dir";
  return (
    <ConfirmDialog
      trigger={props.trigger}
      onOpenChange={(open) => open || setRecursive(false)}
      title={`Delete ${entry.path}?`}
      description={
        recursive
          ? "This folder is not empty: everything in it is deleted too. This cannot be undone."
          : folder
            ? "The folder is deleted if it is empty. This cannot be undone."
            : "The file is deleted. This cannot be undone (a snapshot can restore the whole tree)."
      }
      confirmLabel={recursive ? "Delete everything" : "Delete"}
      typedName={recursive ? entry.name : undefined}
      onConfirm={async () => {
        try {
          await props.act.run(
            "fs.delete",
            { path: entry.path, ...(recursive ? { recursive: true } : {}) },
            `Deleted ${entry.path}`,
            { quiet: (err) => folder && errorCode(err) === "fs_conflict" },
          );
        } catch (err) {
          if (folder && !recursive && errorCode(err) === "fs_conflict") {
            setRecursive(true);
            throw new Error(
              `fs_conflict: ${entry.path} is not empty. Type its name to delete it with everything in it.`,
            );
          }
          throw err;
        }
        setRecursive(false);
        props.onDeleted();
      }}
    />
  );
}
