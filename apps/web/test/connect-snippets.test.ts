// The Connect dialog's snippets as text (connect.e2e.test.ts runs curl's and the Cursor config's
// for real): the key or the placeholder in each, the group header only with a group, JSON
// configs that parse, no key in the files meant to hold none, mcp-remote's http rule.
import { describe, expect, it } from "vitest";
import {
  type ConnectTarget,
  claudeDesktopConfig,
  curlSnippet,
  cursorConfig,
  envSnippet,
  KEY_PLACEHOLDER,
  sdkSnippet,
  vscodeConfig,
} from "../src/components/connect/snippets";

const target: ConnectTarget = {
  apiUrl: "https://api.prim.test",
  mcpUrl: "https://mcp.prim.test/mcp",
  key: "pk_secret",
  group: "app",
};
const servers = (text: string, root = "mcpServers") =>
  (JSON.parse(text) as Record<string, Record<string, Record<string, unknown>>>)[root]?.prim;

describe("the Connect dialog's snippets", () => {
  it("fill in the key, or the placeholder without one", () => {
    expect(curlSnippet(target)).toBe(
      'curl -sS "https://api.prim.test/v1/primitives?group=app" \\\n  -H "Authorization: Bearer pk_secret"\n',
    );
    expect(envSnippet(target)).toBe("PRIM_API_URL=https://api.prim.test\nPRIM_API_KEY=pk_secret\n");
    expect(sdkSnippet(target)).toContain('prim.primitives.list({ group: "app" })');
    const none = { ...target, key: null };
    for (const text of [
      curlSnippet(none),
      envSnippet(none),
      cursorConfig(none, "key"),
      claudeDesktopConfig(none, "key"),
    ]) {
      expect(text).toContain(KEY_PLACEHOLDER);
      expect(text).not.toContain("pk_secret");
    }
  });

  it("name the group on MCP only when there is one, and list every primitive without", () => {
    expect(servers(cursorConfig(target, "key"))).toEqual({
      url: target.mcpUrl,
      headers: { Authorization: "Bearer pk_secret", "X-Service-Group": "app" },
    });
    const noGroup = { ...target, group: null };
    expect(servers(cursorConfig(noGroup, "key"))?.headers).toEqual({ Authorization: "Bearer pk_secret" });
    expect(curlSnippet(noGroup)).toContain('"https://api.prim.test/v1/primitives"');
    expect(sdkSnippet(noGroup)).toContain("prim.primitives.list()");
  });

  it("keep secrets out of the OAuth configs and of VS Code's file", () => {
    for (const text of [
      cursorConfig(target, "oauth"),
      vscodeConfig(target, "oauth"),
      claudeDesktopConfig(target, "oauth"),
    ]) {
      expect(text).not.toContain("pk_");
      expect(text).toContain(target.mcpUrl);
    }
    const vscode = vscodeConfig(target, "key");
    expect(vscode).not.toContain("pk_secret");
    expect(servers(vscode, "servers")).toMatchObject({ type: "http", url: target.mcpUrl });
    expect(servers(vscode, "servers")?.headers).toEqual({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's input variable
      Authorization: "Bearer ${input:prim-api-key}",
      "X-Service-Group": "app",
    });
  });

  it("run mcp-remote for Claude Desktop, with --allow-http only for plain http beyond localhost", () => {
    const claude = servers(claudeDesktopConfig(target, "key"));
    expect(claude).toEqual({
      command: "npx",
      args: [
        "-y",
        "mcp-remote",
        target.mcpUrl,
        "--header",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote's variable
        "Authorization:${PRIM_AUTH_HEADER}",
        "--header",
        "X-Service-Group:app",
      ],
      env: { PRIM_AUTH_HEADER: "Bearer pk_secret" },
    });
    const args = (url: string) => servers(claudeDesktopConfig({ ...target, mcpUrl: url }, "oauth"))?.args;
    expect(args("http://localhost:8788/mcp")).toEqual(["-y", "mcp-remote", "http://localhost:8788/mcp"]);
    expect(args("http://127.0.0.1:8788/mcp")).toEqual(["-y", "mcp-remote", "http://127.0.0.1:8788/mcp"]);
    expect(args("http://10.0.0.5/mcp")).toEqual(["-y", "mcp-remote", "http://10.0.0.5/mcp", "--allow-http"]);
  });
});
