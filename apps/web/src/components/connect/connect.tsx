"use client";
import { PlugIcon } from "lucide-react";
import dynamic from "next/dynamic";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import type { CreatedKey } from "./snippets";

export type { CreatedKey } from "./snippets";

export interface ConnectDialogProps {
  workspace: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** The key just created (filled into the snippets), else the placeholder. */
  createdKey?: CreatedKey | null;
  /** Owners and admins: the hint links to the Keys page; others are told to ask. */
  canCreateKeys: boolean;
}

const ConnectDialogBody = dynamic(() => import("./connect-dialog").then((m) => m.ConnectDialogBody), {
  ssr: false,
});

/**
 * The Connect dialog (connect-dialog.tsx): only this in a page's first load; the dialog, its
 * snippets and tabs come on the first opening.
 */
export function ConnectDialog(props: ConnectDialogProps) {
  return props.open ? <ConnectDialogBody {...props} /> : null;
}

/** A "Connect" button that opens the dialog (with the placeholder key). */
export function ConnectButton({
  workspace,
  canCreateKeys,
  variant = "default",
}: {
  workspace: string;
  canCreateKeys: boolean;
  variant?: "default" | "outline";
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button variant={variant} aria-haspopup="dialog" onClick={() => setOpen(true)}>
        <PlugIcon aria-hidden />
        Connect
      </Button>
      <ConnectDialog workspace={workspace} open={open} onOpenChange={setOpen} canCreateKeys={canCreateKeys} />
    </>
  );
}
