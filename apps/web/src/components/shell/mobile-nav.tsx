"use client";
import { MenuIcon, XIcon } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { SidebarContent, type SidebarProps } from "./sidebar";

/**
 * Under 768 px: a menu button opening the sidebar as a sheet from the left — a native modal
 * <dialog> (the page behind is inert, Escape closes, focus returns to the button; no dialog
 * library in every page's first load). It closes on navigation, on the backdrop and when the
 * screen widens (the sidebar is back).
 */
export function MobileNav(props: SidebarProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  // The sidebar's content is rendered only while the sheet is open (not twice in the page).
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (open) dialog.current?.showModal();
  }, [open]);
  const close = () => dialog.current?.close();
  useEffect(() => {
    const wide = window.matchMedia("(min-width: 768px)");
    const onChange = () => {
      if (wide.matches) dialog.current?.close();
    };
    wide.addEventListener("change", onChange);
    return () => wide.removeEventListener("change", onChange);
  }, []);
  return (
    <>
      <button
        type="button"
        className="inline-flex size-9 items-center justify-center rounded-md border outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring md:hidden"
        aria-label="Open menu"
        aria-haspopup="dialog"
        onClick={() => setOpen(true)}
      >
        <MenuIcon className="size-5" aria-hidden />
      </button>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: a click on the backdrop only; Escape closes the dialog natively */}
      <dialog
        ref={dialog}
        aria-label="Menu"
        onClose={() => setOpen(false)}
        className="fixed inset-y-0 left-0 m-0 h-dvh max-h-none w-72 max-w-[85vw] border-r bg-sidebar p-0 text-foreground shadow-lg backdrop:bg-black/50 md:hidden"
        onClick={(event) => {
          if (event.target === dialog.current) close();
        }}
      >
        <button
          type="button"
          className="absolute top-3 right-3 z-10 rounded-sm p-1 text-muted-foreground outline-none hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring"
          aria-label="Close menu"
          onClick={close}
        >
          <XIcon className="size-4" aria-hidden />
        </button>
        {open && (
          <div className="h-full pt-8">
            <SidebarContent {...props} onNavigate={close} />
          </div>
        )}
      </dialog>
    </>
  );
}
