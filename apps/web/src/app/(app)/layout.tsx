import type { ReactNode } from "react";
import { Providers } from "./providers";

/**
 * The pages that talk to the dashboard's procedures get TanStack Query and the tRPC client;
 * sign-in, sign-up and the consent screen stay without them (a smaller first load).
 */
export default function AppLayout({ children }: { children: ReactNode }) {
  return <Providers>{children}</Providers>;
}
