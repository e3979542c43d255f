// Toasts without sonner in a page's first load: the same calls as `toast` from "sonner"
// (which the workspace shell's <Toaster/> loads right after the page), the module fetched on
// the first toast. `import { toast } from "sonner"` works as well, at ~10 KiB of first load.

type Sonner = typeof import("sonner");
let sonner: Promise<Sonner> | undefined;
const load = () => {
  sonner ??= import("sonner");
  return sonner;
};

export const toast = {
  success: (message: string): void => void load().then((s) => s.toast.success(message)),
  error: (message: string): void => void load().then((s) => s.toast.error(message)),
  info: (message: string): void => void load().then((s) => s.toast.info(message)),
};
