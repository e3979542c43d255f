"use client";
import type { ReactNode } from "react";
import { CodeBlock } from "@/components/ui/code-block";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@/components/ui/tabs";
import {
  type ConnectTarget,
  claudeDesktopConfig,
  curlSnippet,
  cursorConfig,
  envSnippet,
  type McpAuth,
  sdkSnippet,
  vscodeConfig,
} from "./snippets";

function Note({ children }: { children: ReactNode }) {
  return <p className="text-sm text-muted-foreground">{children}</p>;
}

/** One client's two ways in: a key in a header, or OAuth (the file holds no secret). */
function McpVariants({
  id,
  file,
  config,
  keyNote,
  oauthNote,
  target,
}: {
  id: string;
  file: string;
  config: (t: ConnectTarget, auth: McpAuth) => string;
  keyNote: ReactNode;
  oauthNote: ReactNode;
  target: ConnectTarget;
}) {
  return (
    <div className="grid min-w-0 gap-4">
      <section className="grid min-w-0 gap-2" aria-label="With an API key">
        <h3 className="text-sm font-medium">With an API key</h3>
        <Note>{keyNote}</Note>
        <div data-testid={`connect-${id}-key`} className="min-w-0">
          <CodeBlock code={config(target, "key")} label={file} language="json" />
        </div>
      </section>
      <section className="grid min-w-0 gap-2" aria-label="With OAuth">
        <h3 className="text-sm font-medium">With OAuth (no secret in the file)</h3>
        <Note>{oauthNote}</Note>
        <div data-testid={`connect-${id}-oauth`} className="min-w-0">
          <CodeBlock code={config(target, "oauth")} label={file} language="json" />
        </div>
      </section>
    </div>
  );
}

/** Two columns of tabs on a phone (a row each would not fit), one row from `sm` up. */
const TRIGGER = "h-8 sm:h-full";

const OAUTH_CONSENT =
  "You sign in to this dashboard, then pick one group and the tools the app may use; disconnect it any time under Apps.";

/** The snippets, a tab per client, all filled with `target` (its key, or the placeholder). */
export function ConnectTabs({ target }: { target: ConnectTarget }) {
  return (
    <Tabs defaultValue="curl" className="min-w-0">
      <TabsList aria-label="Client" className="grid h-auto w-full grid-cols-2 sm:inline-flex sm:h-9 sm:w-fit">
        <TabsTrigger value="curl" className={TRIGGER}>
          curl
        </TabsTrigger>
        <TabsTrigger value="sdk" className={TRIGGER}>
          TypeScript
        </TabsTrigger>
        <TabsTrigger value="env" className={TRIGGER}>
          .env
        </TabsTrigger>
        <TabsTrigger value="cursor" className={TRIGGER}>
          Cursor
        </TabsTrigger>
        <TabsTrigger value="vscode" className={TRIGGER}>
          VS Code
        </TabsTrigger>
        <TabsTrigger value="claude" className={TRIGGER}>
          Claude Desktop
        </TabsTrigger>
      </TabsList>
      <TabsContent value="curl" className="grid min-w-0 gap-2">
        <Note>
          Lists the primitives{target.group === null ? "" : ` of group ${target.group}`} (
          <code>GET /v1/primitives</code>): every key may call it.
        </Note>
        <div data-testid="connect-curl" className="min-w-0">
          <CodeBlock code={curlSnippet(target)} label="curl" language="shell" />
        </div>
      </TabsContent>
      <TabsContent value="sdk" className="grid min-w-0 gap-2">
        <Note>
          The TypeScript SDK (<code>@prim/sdk</code>, <code>packages/sdk</code> in the Prim repository) reads the
          variables of the .env tab.
        </Note>
        <div data-testid="connect-sdk" className="min-w-0">
          <CodeBlock code={sdkSnippet(target)} label="index.ts" language="typescript" />
        </div>
      </TabsContent>
      <TabsContent value="env" className="grid min-w-0 gap-2">
        <Note>
          <code>PRIM_API_URL</code> and <code>PRIM_API_KEY</code>, the names the <code>prim</code> CLI reads too. Keep
          the file out of version control.
        </Note>
        <div data-testid="connect-env" className="min-w-0">
          <CodeBlock code={envSnippet(target)} label=".env" language="dotenv" />
        </div>
      </TabsContent>
      <TabsContent value="cursor">
        <McpVariants
          id="cursor"
          file="~/.cursor/mcp.json"
          config={cursorConfig}
          target={target}
          keyNote={
            <>
              In <code>~/.cursor/mcp.json</code> (every project) or <code>.cursor/mcp.json</code> (one project).
            </>
          }
          oauthNote={`Same file: Cursor opens the sign-in when it first connects. ${OAUTH_CONSENT}`}
        />
      </TabsContent>
      <TabsContent value="vscode">
        <McpVariants
          id="vscode"
          file=".vscode/mcp.json"
          config={vscodeConfig}
          target={target}
          keyNote={
            <>
              In <code>.vscode/mcp.json</code> of your project. VS Code asks for the key once and keeps it in its secret
              storage, so the file can be committed.
            </>
          }
          oauthNote={`Same file: VS Code asks you to sign in when it first starts the server. ${OAUTH_CONSENT}`}
        />
      </TabsContent>
      <TabsContent value="claude">
        <McpVariants
          id="claude"
          file="claude_desktop_config.json"
          config={claudeDesktopConfig}
          target={target}
          keyNote={
            <>
              Settings → Developer → Edit Config opens <code>claude_desktop_config.json</code> (macOS:{" "}
              <code>~/Library/Application Support/Claude/</code>, Windows: <code>%APPDATA%\Claude\</code>); restart
              Claude after saving. <code>npx mcp-remote</code> bridges to the remote server (Node.js 18 or later).
            </>
          }
          oauthNote={
            <>
              mcp-remote opens the sign-in in your browser. {OAUTH_CONSENT} On a deployment reachable over https,
              Settings → Connectors → Add custom connector with the MCP URL does the same without a file.
            </>
          }
        />
      </TabsContent>
    </Tabs>
  );
}
