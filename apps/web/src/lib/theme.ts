// The theme: "system" (prefers-color-scheme), "light" or "dark", kept in localStorage under
// THEME_KEY; the `dark` class on <html> is what the styles read (globals.css).

export const THEME_KEY = "prim-theme";
export type Theme = "system" | "light" | "dark";
export const THEMES: readonly Theme[] = ["system", "light", "dark"];

/**
 * Sets the `dark` class on <html> from the stored choice (else prefers-color-scheme) and keeps
 * following the system's scheme while the choice is "system" (or absent); exposes
 * `window.__primTheme()` to re-apply. A switch after load happens with transitions off (no
 * colours caught half-way). Self-contained: it is also the inline script (THEME_SCRIPT).
 */
export function installTheme(): void {
  var query = window.matchMedia("(prefers-color-scheme: dark)");
  function apply() {
    var stored = null;
    try {
      stored = localStorage.getItem("prim-theme");
    } catch (_) {}
    var dark = stored === "dark" || (stored !== "light" && query.matches);
    var root = document.documentElement;
    if (root.classList.contains("dark") === dark && root.style.colorScheme) return;
    var style = null;
    if (document.body) {
      style = document.createElement("style");
      style.textContent = "*,*::before,*::after{transition:none!important}";
      document.head.appendChild(style);
    }
    root.classList.toggle("dark", dark);
    root.style.colorScheme = dark ? "dark" : "light";
    if (style) {
      getComputedStyle(document.body).color;
      style.remove();
    }
  }
  apply();
  (window as unknown as { __primTheme: () => void }).__primTheme = apply;
  query.addEventListener("change", apply);
}

/** Inline in <head>, before the first paint (no flash); ThemeSync runs it where that did not. */
export const THEME_SCRIPT = `(${installTheme.toString()})()`;

export function readTheme(): Theme {
  try {
    const stored = localStorage.getItem(THEME_KEY);
    return stored === "light" || stored === "dark" ? stored : "system";
  } catch {
    return "system";
  }
}

export function applyTheme(theme: Theme): void {
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {
    // Storage refused (private mode): the choice lasts for this page only.
  }
  const apply = (window as unknown as { __primTheme?: () => void }).__primTheme;
  if (apply !== undefined) apply();
  else document.documentElement.classList.toggle("dark", theme === "dark");
}
