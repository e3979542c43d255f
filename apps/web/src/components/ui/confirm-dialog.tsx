"use client";
import { Slot } from "@radix-ui/react-slot";
import dynamic from "next/dynamic";
import { type ReactNode, useState } from "react";

export interface ConfirmDialogProps {
  /** The element that opens the dialog (one element; omit when `open` is controlled). */
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

const ConfirmDialogBody = dynamic(() => import("./confirm-dialog-body").then((m) => m.ConfirmDialogBody), {
  ssr: false,
});

/**
 * THE confirmation for every destructive action (a Radix dialog: focus trapped and returned,
 * Escape closes): a plain confirm, or with `typedName` a name to type first. The dialog closes
 * once `onConfirm` settles without error; an error stays in the dialog until the next attempt.
 * Only the trigger is in the page's first load; the dialog's code comes on the first opening.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const [ownOpen, setOwnOpen] = useState(false);
  const open = props.open ?? ownOpen;
  function setOpen(next: boolean) {
    if (props.open === undefined) setOwnOpen(next);
    props.onOpenChange?.(next);
  }
  return (
    <>
      {props.trigger !== undefined && (
        <Slot aria-haspopup="dialog" onClick={() => setOpen(true)}>
          {props.trigger}
        </Slot>
      )}
      {open && <ConfirmDialogBody {...props} open onOpenChange={setOpen} />}
    </>
  );
}
