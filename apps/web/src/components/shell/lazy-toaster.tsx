"use client";
import dynamic from "next/dynamic";

/** The toaster, loaded after the page (no toast is shown before anything was done). */
export const LazyToaster = dynamic(
  () => import("@/components/ui/sonner").then((m) => () => <m.Toaster position="bottom-right" />),
  {
    ssr: false,
  },
);
