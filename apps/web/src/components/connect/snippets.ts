/**
 * The Connect dialog's snippets (issue 39 item 2), pure functions of what the dialog knows: this
 * deployment's REST base URL and MCP endpoint, the key (or a placeholder) and the group. Every
 * one is copied as is and works: JSON configs are JSON.stringify's, the curl line a real route
 * (spec: `GET /v1/primitives?group=`), the SDK's real API (packages/sdk).
 */

/** What the snippets show until a key is created. */
export const KEY_PLACEHOLDER = "pk_…";

/** The name each MCP config gives the server. */
export const SERVER_NAME = "prim";

/** A key just created (shown once): its secret and the group it is scoped to (null: every group). */
export interface CreatedKey {
  key: string;
  group: string | null;
}

export interface ConnectTarget {
  /** The REST base URL (routes under `/v1`). */
  apiUrl: string;
  /** The MCP endpoint (`…/mcp`): the same for every group; OAuth tokens are issued for it. */
  mcpUrl: string;
  /** The key filled in, or null for the placeholder. */
  key: string | null;
  /**
   * The group reached: a workspace key names it in `X-Service-Group` on MCP (spec, "Group
   * selection on MCP"); a key scoped to a group reaches its own. Null: no group yet.
   */
  group: string | null;
}

const keyOf = (t: ConnectTarget) => t.key ?? KEY_PLACEHOLDER;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** A double-quoted shell word (`"`, `$`, backquote and backslash escaped). */
function quoted(text: string): string {
  return `"${text.replace(/["$`\\]/g, (c) => `\\${c}`)}"`;
}

/** `GET /v1/primitives` (of the group): every key may call it (`primitive_list` is always allowed). */
export function primitivesUrl(t: ConnectTarget): string {
  const url = new URL(`${t.apiUrl}/v1/primitives`);
  if (t.group !== null) url.searchParams.set("group", t.group);
  return url.href;
}

export function curlSnippet(t: ConnectTarget): string {
  return `curl -sS ${quoted(primitivesUrl(t))} \\\n  -H ${quoted(`Authorization: Bearer ${keyOf(t)}`)}\n`;
}

/** The variables the snippets read (`PRIM_API_URL` and `PRIM_API_KEY`, as the `prim` CLI does). */
export function envSnippet(t: ConnectTarget): string {
  return `PRIM_API_URL=${t.apiUrl}\nPRIM_API_KEY=${keyOf(t)}\n`;
}

export function sdkSnippet(t: ConnectTarget): string {
  const filter = t.group === null ? "" : `{ group: ${JSON.stringify(t.group)} }`;
  return [
    `import { PrimClient } from "@prim/sdk";`,
    "",
    "// PRIM_API_URL and PRIM_API_KEY: the .env tab.",
    "const prim = new PrimClient({ baseUrl: process.env.PRIM_API_URL, token: process.env.PRIM_API_KEY });",
    `const { data } = await prim.primitives.list(${filter});`,
    "for (const p of data) console.log(p.type, p.name, p.id);",
    "",
  ].join("\n");
}

/** The headers an MCP client sends with a key (no group header without a group). */
export function mcpHeaders(t: ConnectTarget): Record<string, string> {
  return {
    Authorization: `Bearer ${keyOf(t)}`,
    ...(t.group === null ? {} : { "X-Service-Group": t.group }),
  };
}

export type McpAuth = "key" | "oauth";

/** Cursor: `~/.cursor/mcp.json` (or `.cursor/mcp.json` in a project), `mcpServers` with `url`. */
export function cursorConfig(t: ConnectTarget, auth: McpAuth): string {
  const server = auth === "key" ? { url: t.mcpUrl, headers: mcpHeaders(t) } : { url: t.mcpUrl };
  return json({ mcpServers: { [SERVER_NAME]: server } });
}

/**
 * VS Code: `.vscode/mcp.json`, `servers` with `type: "http"`. With a key, VS Code prompts for
 * it once and keeps it in its secret storage (`${input:…}`), so the file, which often lives in
 * a repository, holds no secret.
 */
export function vscodeConfig(t: ConnectTarget, auth: McpAuth): string {
  if (auth === "oauth") return json({ servers: { [SERVER_NAME]: { type: "http", url: t.mcpUrl } } });
  // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own input variable, written as is
  const headers = { ...mcpHeaders(t), Authorization: "Bearer ${input:prim-api-key}" };
  return json({
    inputs: [{ type: "promptString", id: "prim-api-key", description: "Prim API key (pk_…)", password: true }],
    servers: { [SERVER_NAME]: { type: "http", url: t.mcpUrl, headers } },
  });
}

/** mcp-remote refuses plain http except to localhost and 127.0.0.1 without `--allow-http`. */
function mcpRemoteUrlArgs(url: string): string[] {
  const u = new URL(url);
  const local = u.hostname === "localhost" || u.hostname === "127.0.0.1";
  return u.protocol === "http:" && !local ? [url, "--allow-http"] : [url];
}

/**
 * Claude Desktop: `claude_desktop_config.json` runs `npx mcp-remote <url>` (a local bridge to a
 * remote server). With a key: `--header` values without spaces (Claude Desktop on Windows splits
 * arguments at spaces), the key in `env`. With OAuth: mcp-remote signs in through the browser.
 */
export function claudeDesktopConfig(t: ConnectTarget, auth: McpAuth): string {
  const args = ["-y", "mcp-remote", ...mcpRemoteUrlArgs(t.mcpUrl)];
  if (auth === "oauth") return json({ mcpServers: { [SERVER_NAME]: { command: "npx", args } } });
  // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote expands the variable from `env`
  args.push("--header", "Authorization:${PRIM_AUTH_HEADER}");
  if (t.group !== null) args.push("--header", `X-Service-Group:${t.group}`);
  return json({
    mcpServers: { [SERVER_NAME]: { command: "npx", args, env: { PRIM_AUTH_HEADER: `Bearer ${keyOf(t)}` } } },
  });
}
