"use client";
import * as DialogPrimitive from "@radix-ui/react-dialog";
import { MenuIcon, XIcon } from "lucide-react";
import { useState } from "react";
import { SidebarContent, type SidebarProps } from "./sidebar";

/** Under 768 px: a menu button opening the sidebar as a sheet from the left (a Radix dialog). */
export function MobileNav(props: SidebarProps) {
  const [open, setOpen] = useState(false);
  return (
    <DialogPrimitive.Root open={open} onOpenChange={setOpen}>
      <DialogPrimitive.Trigger
        className="inline-flex size-9 items-center justify-center rounded-md border outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring md:hidden"
        aria-label="Open menu"
      >
        <MenuIcon className="size-5" aria-hidden />
      </DialogPrimitive.Trigger>
      <DialogPrimitive.Portal>
        <DialogPrimitive.Overlay className="fixed inset-0 z-50 bg-black/50 md:hidden" />
        <DialogPrimitive.Content
          className="fixed inset-y-0 left-0 z-50 w-72 max-w-[85vw] border-r bg-sidebar text-foreground shadow-lg outline-none md:hidden"
          aria-describedby={undefined}
        >
          <DialogPrimitive.Title className="sr-only">Menu</DialogPrimitive.Title>
          <DialogPrimitive.Close
            className="absolute top-3 right-3 z-10 rounded-sm p-1 text-muted-foreground hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none"
            aria-label="Close menu"
          >
            <XIcon className="size-4" aria-hidden />
          </DialogPrimitive.Close>
          <div className="h-full pt-8">
            <SidebarContent {...props} onNavigate={() => setOpen(false)} />
          </div>
        </DialogPrimitive.Content>
      </DialogPrimitive.Portal>
    </DialogPrimitive.Root>
  );
}
