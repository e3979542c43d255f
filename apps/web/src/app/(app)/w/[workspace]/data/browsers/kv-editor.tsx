"use client";
import { type FormEvent, useState } from "react";
import { Button } from "@/components/ui/button";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { SubmitButton } from "@/components/ui/submit-button";
import { formatDate, formatRelative } from "@/lib/format";
import { Field, JsonEditor, type useAct } from "./edit-kit";
import { parseJson, pretty } from "./json-text";

export type KvEntry = {
  key: string;
  value?: unknown;
  encoding?: "json" | "bytes";
  version?: number;
  expires_at?: number | null;
  updated_at?: number;
};

/**
 * Add a key (`if_version: 0`: an existing key is refused, not overwritten) or edit one (its
 * version: a change made meanwhile is refused, 412 `precondition_failed`). The value is JSON,
 * checked as typed and formatted when saved; the TTL in seconds, empty for none (a save without
 * a TTL clears any expiry, as the API does).
 */
export function KvEditor(props: {
  act: ReturnType<typeof useAct>;
  entry: KvEntry | null;
  prefix: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const editing = props.entry !== null;
  return (
    <Dialog open={props.open} onOpenChange={(open) => !props.act.pending && props.onOpenChange(open)}>
      <DialogContent className="sm:max-w-2xl">
        <DialogHeader>
          <DialogTitle>{editing ? "Edit key" : "Add a key"}</DialogTitle>
          <DialogDescription>
            {editing
              ? "Saving replaces the value; it is refused if the key changed since it was opened."
              : "A new key: refused if the key already exists."}
          </DialogDescription>
        </DialogHeader>
        {props.open && <EditorForm {...props} />}
      </DialogContent>
    </Dialog>
  );
}

function remainingSeconds(expiresAt: number | null | undefined): string {
  if (expiresAt == null) return "";
  return String(Math.max(1, Math.ceil((expiresAt - Date.now()) / 1000)));
}

function EditorForm(props: Parameters<typeof KvEditor>[0]) {
  const entry = props.entry;
  const [key, setKey] = useState(entry?.key ?? props.prefix);
  const [text, setText] = useState(entry === null ? "{\n  \n}" : pretty(entry.value));
  const [ttl, setTtl] = useState(remainingSeconds(entry?.expires_at));
  const parsed = parseJson(text);
  const ttlOk = ttl.trim() === "" || /^[1-9]\d{0,9}$/.test(ttl.trim());
  const ready = parsed.ok && key !== "" && ttlOk && !props.act.pending;
  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!ready || !parsed.ok) return;
    setText(pretty(parsed.value));
    const args = {
      key,
      value: parsed.value,
      ...(ttl.trim() === "" ? {} : { ttl: `${ttl.trim()}s` }),
      if_version: entry?.version ?? 0,
    };
    try {
      await props.act.run("kv.set", args, editing(entry) ? `Saved ${key}` : `Added ${key}`);
      props.onOpenChange(false);
    } catch {
      // toasted; the dialog stays open with the text as typed
    }
  }
  return (
    <form onSubmit={save} className="grid gap-4">
      <Field label="Key">
        {(id) => (
          <Input
            id={id}
            value={key}
            onChange={(e) => setKey(e.target.value)}
            readOnly={entry !== null}
            autoFocus={entry === null}
            spellCheck={false}
            autoComplete="off"
            className="font-mono"
          />
        )}
      </Field>
      <JsonEditor label="Value (JSON)" value={text} onChange={setText} rows={10} autoFocus={entry !== null} />
      <Field
        label="Expires after (seconds)"
        hint={
          entry?.expires_at == null
            ? "Empty: the key never expires."
            : `Now expires ${formatRelative(entry.expires_at)} (${formatDate(entry.expires_at)}). Empty: never expires.`
        }
      >
        {(id) => (
          <Input
            id={id}
            value={ttl}
            onChange={(e) => setTtl(e.target.value)}
            inputMode="numeric"
            placeholder="none"
            aria-invalid={!ttlOk}
            className="w-40"
          />
        )}
      </Field>
      {!ttlOk && (
        <p role="alert" className="text-xs text-destructive">
          The TTL is a whole number of seconds, or empty.
        </p>
      )}
      <DialogFooter>
        <Button variant="outline" onClick={() => props.onOpenChange(false)} disabled={props.act.pending}>
          Cancel
        </Button>
        <SubmitButton disabled={!ready} aria-busy={props.act.pending}>
          {props.act.pending ? "Saving…" : editing(entry) ? "Save" : "Add key"}
        </SubmitButton>
      </DialogFooter>
    </form>
  );
}

function editing(entry: KvEntry | null): entry is KvEntry {
  return entry !== null;
}
