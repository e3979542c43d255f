"use client";
import { type FormEvent, type ReactNode, useId, useState } from "react";
import { Button } from "./button";
import {
  Dialog,
  DialogClose,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
  DialogTrigger,
} from "./dialog";
import { Input } from "./input";

export interface ConfirmDialogProps {
  /** The element that opens the dialog (omit when `open` is controlled). */
  trigger?: ReactNode;
  title: string;
  description?: ReactNode;
  /** The confirming button's text ("Delete", "Revoke", …). */
  confirmLabel: string;
  /** When set, the confirming button stays disabled until exactly this is typed. */
  typedName?: string;
  /** Red confirming button (default true). */
  destructive?: boolean;
  /** May return a promise: the button shows it pending, a rejection is shown in the dialog. */
  onConfirm: (typed: string) => unknown;
  open?: boolean;
  onOpenChange?: (open: boolean) => void;
}

/**
 * THE confirmation for every destructive action (a Radix dialog: focus trapped and returned,
 * Escape closes): a plain confirm, or with `typedName` a name to type first. The dialog closes
 * once `onConfirm` settles without error; an error stays in the dialog until the next attempt.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const [ownOpen, setOwnOpen] = useState(false);
  const open = props.open ?? ownOpen;
  const [typed, setTyped] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  function setOpen(next: boolean) {
    if (pending && !next) return;
    if (props.open === undefined) setOwnOpen(next);
    props.onOpenChange?.(next);
    if (!next) {
      setTyped("");
      setError(null);
    }
  }
  const ready = props.typedName === undefined || typed === props.typedName;
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!ready || pending) return;
    setError(null);
    setPending(true);
    try {
      await props.onConfirm(typed);
      setPending(false);
      if (props.open === undefined) setOwnOpen(false);
      props.onOpenChange?.(false);
      setTyped("");
    } catch (cause) {
      setPending(false);
      setError(cause instanceof Error ? cause.message : String(cause));
    }
  }
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      {props.trigger !== undefined && <DialogTrigger asChild>{props.trigger}</DialogTrigger>}
      <DialogContent>
        <form onSubmit={submit} className="grid gap-4">
          <DialogHeader>
            <DialogTitle>{props.title}</DialogTitle>
            {props.description !== undefined && <DialogDescription>{props.description}</DialogDescription>}
          </DialogHeader>
          {props.typedName !== undefined && (
            <div className="grid gap-2">
              <label htmlFor={inputId} className="text-sm">
                Type <span className="font-mono font-semibold break-all">{props.typedName}</span> to confirm
              </label>
              <Input
                id={inputId}
                value={typed}
                onChange={(e) => setTyped(e.target.value)}
                autoComplete="off"
                spellCheck={false}
                className="font-mono"
              />
            </div>
          )}
          {error !== null && (
            <p role="alert" className="text-sm text-destructive">
              {error}
            </p>
          )}
          <DialogFooter>
            <DialogClose asChild>
              <Button variant="outline" disabled={pending}>
                Cancel
              </Button>
            </DialogClose>
            <Button
              type="submit"
              variant={props.destructive === false ? "default" : "destructive"}
              disabled={!ready || pending}
              aria-busy={pending}
            >
              {pending ? `${props.confirmLabel}…` : props.confirmLabel}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
