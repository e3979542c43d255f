import type { ReactNode } from "react";
import { LazyToaster } from "@/components/shell/lazy-toaster";
import { Providers } from "./providers";

/**
 * The pages that talk to the dashboard's procedures get TanStack Query and the tRPC client;
 * sign-in, sign-up and the consent screen stay without them (a smaller first load).
 */
export default function AppLayout({ children }: { children: ReactNode }) {
  // The toasts live here, above every page of the group (loaded after the page): one shown as a
  // page navigates away (a deleted workspace's toast on the workspaces list) stays on screen.
  return (
    <Providers>
      {children}
      <LazyToaster />
    </Providers>
  );
}
