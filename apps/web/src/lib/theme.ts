// The theme: "system" (prefers-color-scheme), "light" or "dark", kept in localStorage under
// THEME_KEY; the `dark` class on <html> is what the styles read (globals.css).

export const THEME_KEY = "prim-theme";
export type Theme = "system" | "light" | "dark";
export const THEMES: readonly Theme[] = ["system", "light", "dark"];

/**
 * Runs inline in <head> before the first paint (no flash), and keeps following the system's
 * scheme while the stored choice is "system" (or absent). Exposes `window.__primTheme()` to re-apply.
 */
export const THEME_SCRIPT = `(function(){var k=${JSON.stringify(THEME_KEY)},q=window.matchMedia("(prefers-color-scheme: dark)");function a(){var t=null;try{t=localStorage.getItem(k)}catch(e){}var d=t==="dark"||(t!=="light"&&q.matches);var r=document.documentElement;r.classList.toggle("dark",d);r.style.colorScheme=d?"dark":"light"}a();window.__primTheme=a;q.addEventListener("change",a)})()`;

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
