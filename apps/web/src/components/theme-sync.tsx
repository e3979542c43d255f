"use client";
import { useEffect } from "react";
import { installTheme } from "@/lib/theme";

/**
 * The theme script once more after hydration when the inline one did not run: a page rendered
 * on the client (an error or not-found shell) gets its <head> script inserted, never executed.
 */
export function ThemeSync() {
  useEffect(() => {
    if (!("__primTheme" in window)) installTheme();
  }, []);
  return null;
}
