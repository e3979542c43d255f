"use client";
import type { MemoryRecord } from "@prim/wire";
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import {
  Dialog,
  DialogClose,
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
import { errorText } from "@/lib/errors";
import { toast } from "@/lib/toast";
import { MONO_FIELD, type useAct } from "./act";

type Act = ReturnType<typeof useAct>;

/** "a, b ,, c" → ["a", "b", "c"]. */
export function parseTags(text: string): string[] {
  return text
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
}

/** Metadata typed as JSON: an object, or an error to show under the field. */
export function parseMetadata(text: string): { value: Record<string, unknown> } | { error: string } {
  if (text.trim() === "") return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { error: 'Metadata must be a JSON object, like {"source": "chat"}.' };
    }
    return { value: value as Record<string, unknown> };
  } catch (cause) {
    return { error: `Not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}` };
  }
}

/** Remember: a kind, the text, optional tags and metadata (memory.remember's input). */
export function AddMemory(props: { act: Act; onDone: () => unknown }) {
  const ids = { kind: useId(), text: useId(), tags: useId(), meta: useId(), metaHint: useId() };
  const [kind, setKind] = useState("note");
  const [text, setText] = useState("");
  const [tags, setTags] = useState("");
  const [meta, setMeta] = useState("");
  const [metaError, setMetaError] = useState<string | null>(null);
  const remember = useMutation({
    mutationFn: (input: Record<string, unknown>) => props.act<MemoryRecord>("memory.remember", input),
    onSuccess: () => {
      toast.success("Memory added");
      setText("");
      setTags("");
      setMeta("");
      void props.onDone();
    },
    onError: (error) => toast.error(`Could not add the memory: ${errorText(error)}`),
  });
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const metadata = parseMetadata(meta);
    if ("error" in metadata) {
      setMetaError(metadata.error);
      return;
    }
    setMetaError(null);
    remember.mutate({ kind: kind.trim(), text, tags: parseTags(tags), metadata: metadata.value });
  }
  return (
    <Card>
      <CardHeader>
        <CardTitle className="text-base">Add a memory</CardTitle>
        <CardDescription>What an agent would remember: recall finds it by meaning and words.</CardDescription>
      </CardHeader>
      <CardContent>
        <form onSubmit={submit} className="grid gap-4">
          <div className="grid gap-2">
            <Label htmlFor={ids.text}>Memory text</Label>
            <Textarea id={ids.text} value={text} onChange={(e) => setText(e.target.value)} rows={3} required />
          </div>
          <div className="grid gap-4 sm:grid-cols-2">
            <div className="grid gap-2">
              <Label htmlFor={ids.kind}>Kind</Label>
              <Input id={ids.kind} value={kind} onChange={(e) => setKind(e.target.value)} required maxLength={64} />
            </div>
            <div className="grid gap-2">
              <Label htmlFor={ids.tags}>Tags (comma-separated)</Label>
              <Input
                id={ids.tags}
                value={tags}
                onChange={(e) => setTags(e.target.value)}
                placeholder="billing, user-42"
              />
            </div>
          </div>
          <div className="grid gap-2">
            <Label htmlFor={ids.meta}>Metadata (JSON, optional)</Label>
            <Textarea
              id={ids.meta}
              value={meta}
              onChange={(e) => setMeta(e.target.value)}
              rows={2}
              placeholder='{"source": "support chat"}'
              spellCheck={false}
              aria-invalid={metaError !== null}
              aria-describedby={metaError === null ? undefined : ids.metaHint}
              className={MONO_FIELD}
            />
            {metaError !== null && (
              <p id={ids.metaHint} className="text-xs text-destructive">
                {metaError}
              </p>
            )}
          </div>
          <div>
            <SubmitButton disabled={remember.isPending} aria-busy={remember.isPending}>
              {remember.isPending ? "Remembering…" : "Remember"}
            </SubmitButton>
          </div>
        </form>
      </CardContent>
    </Card>
  );
}

/** Supersede: a new memory replaces this one (the old one kept, marked replaced). */
export function SupersedeDialog(props: { act: Act; memory: MemoryRecord; onDone: () => unknown }) {
  const { memory } = props;
  const id = useId();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState(memory.text);
  const supersede = useMutation({
    mutationFn: () => props.act<MemoryRecord>("memory.supersede", { id: memory.id, text }),
    onSuccess: () => {
      toast.success("Memory superseded");
      setOpen(false);
      void props.onDone();
    },
    onError: (error) => toast.error(`Could not supersede: ${errorText(error)}`),
  });
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        if (next) setText(memory.text);
        if (!supersede.isPending) setOpen(next);
      }}
    >
      <DialogTrigger asChild>
        <Button size="sm" variant="outline" aria-label={`Supersede: ${memory.text.slice(0, 40)}`}>
          Supersede
        </Button>
      </DialogTrigger>
      <DialogContent>
        <form
          className="grid gap-4"
          onSubmit={(event) => {
            event.preventDefault();
            supersede.mutate();
          }}
        >
          <DialogHeader>
            <DialogTitle>Supersede this memory</DialogTitle>
            <DialogDescription>
              A new memory with this text replaces it; the old one stays, marked replaced, and recall stops returning
              it.
            </DialogDescription>
          </DialogHeader>
          <figure className="grid gap-1">
            <figcaption className="text-xs font-medium text-muted-foreground">Current text</figcaption>
            <blockquote className="max-h-40 overflow-y-auto whitespace-pre-wrap break-words rounded-md border bg-muted/50 p-2 text-sm">
              {memory.text}
            </blockquote>
          </figure>
          <div className="grid gap-2">
            <Label htmlFor={id}>New text</Label>
            <Textarea id={id} value={text} onChange={(e) => setText(e.target.value)} rows={4} required />
          </div>
          {supersede.error !== null && (
            <p role="alert" className="text-sm text-destructive">
              {errorText(supersede.error)}
            </p>
          )}
          <DialogFooter>
            <DialogClose asChild>
              <Button variant="outline" disabled={supersede.isPending}>
                Cancel
              </Button>
            </DialogClose>
            <SubmitButton
              disabled={supersede.isPending || text.trim() === "" || text === memory.text}
              aria-busy={supersede.isPending}
            >
              {supersede.isPending ? "Saving…" : "Save new text"}
            </SubmitButton>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
