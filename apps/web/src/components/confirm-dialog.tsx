"use client";
import * as Dialog from "@radix-ui/react-dialog";
import { type FormEvent, type ReactNode, useState } from "react";

/**
 * A destructive action behind a typed confirmation (Radix Dialog: focus trapped and returned,
 * Escape closes, labelled): the button stays disabled until `word` is typed exactly.
 */
export function ConfirmDialog(props: {
  trigger: ReactNode;
  title: string;
  description: string;
  word: string;
  action: string;
  onConfirm: (typed: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (typed !== props.word) return;
    props.onConfirm(typed);
    setOpen(false);
    setTyped("");
  }
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger asChild>{props.trigger}</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 bg-black/40" />
        <Dialog.Content className="fixed left-1/2 top-1/2 w-[min(92vw,28rem)] -translate-x-1/2 -translate-y-1/2 rounded-lg bg-white p-5 shadow-lg">
          <Dialog.Title className="text-lg font-semibold">{props.title}</Dialog.Title>
          <Dialog.Description className="mt-1 text-sm text-zinc-700">{props.description}</Dialog.Description>
          <form onSubmit={submit} className="mt-4 space-y-3">
            <label className="block text-sm">
              Type <span className="font-mono font-semibold">{props.word}</span> to confirm
              <input
                value={typed}
                onChange={(e) => setTyped(e.target.value)}
                className="mt-1 block w-full rounded border p-2 font-mono"
                autoComplete="off"
              />
            </label>
            <div className="flex justify-end gap-2">
              <Dialog.Close asChild>
                <button type="button" className="rounded border px-3 py-1.5">
                  Cancel
                </button>
              </Dialog.Close>
              <button
                type="submit"
                disabled={typed !== props.word}
                className="rounded bg-red-700 px-3 py-1.5 text-white disabled:opacity-40"
              >
                {props.action}
              </button>
            </div>
          </form>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
