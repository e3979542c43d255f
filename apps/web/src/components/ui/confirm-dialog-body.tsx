"use client";
import { type FormEvent, useId, useState } from "react";
import { Button } from "./button";
import type { ConfirmDialogProps } from "./confirm-dialog";
import {
  Dialog,
  DialogClose,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "./dialog";
import { Input } from "./input";
import { SubmitButton } from "./submit-button";

/**
 * The dialog of ConfirmDialog (loaded on its first opening, so pages carry no dialog code until
 * then): controlled by `open`; unmounted when closed, which resets the typed name and the error
 * and returns focus to the trigger.
 */
export function ConfirmDialogBody(
  props: ConfirmDialogProps & { open: boolean; onOpenChange: (open: boolean) => void },
) {
  const [typed, setTyped] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  // Radix returns focus to a DialogTrigger; this dialog has none: back to what opened it.
  const [returnTo] = useState(() => document.activeElement as HTMLElement | null);
  function setOpen(next: boolean) {
    if (pending && !next) return;
    props.onOpenChange(next);
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
      props.onOpenChange(false);
    } catch (cause) {
      setPending(false);
      setError(cause instanceof Error ? cause.message : String(cause));
    }
  }
  return (
    <Dialog open={props.open} onOpenChange={setOpen}>
      <DialogContent
        onCloseAutoFocus={(event) => {
          event.preventDefault();
          if (returnTo?.isConnected) returnTo.focus();
        }}
      >
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
            <SubmitButton
              variant={props.destructive === false ? "default" : "destructive"}
              disabled={!ready || pending}
              aria-busy={pending}
            >
              {pending ? `${props.confirmLabel}…` : props.confirmLabel}
            </SubmitButton>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
