import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { ThemeSync } from "@/components/theme-sync";
import { THEME_SCRIPT } from "@/lib/theme";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Prim", template: "%s · Prim" },
  description: "Hosted data primitives for developers and agents",
};
export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#ffffff" },
    { media: "(prefers-color-scheme: dark)", color: "#09090b" },
  ],
};

/**
 * Every page: the theme set before paint (lib/theme.ts), a centred column — which the
 * workspace shell (`data-app-shell`, full width with its sidebar) widens (globals.css).
 */
export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* biome-ignore lint/security/noDangerouslySetInnerHtml: a constant script of ours, before paint */}
        <script dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body className="min-h-screen bg-background text-foreground antialiased">
        <main className="mx-auto w-full max-w-3xl px-4 py-8">{children}</main>
        <ThemeSync />
      </body>
    </html>
  );
}
