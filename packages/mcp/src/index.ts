export { MAX_INLINE_BYTES } from "./context.js";
export { type McpMountOptions, mountMcp, parseToolPatterns } from "./http.js";
export { createMcpServer, type McpServerOptions, visibleTools } from "./server.js";
export { proxyStdio, serveStdio } from "./stdio.js";
export { checkToolAccess, type DeclaredAccess, derivedAccess } from "./tools/access.js";
export { checkTools, TOOLS, type ToolSpec } from "./tools/index.js";
export { MAX_SECRET_WAIT_MS, VAULT_REQUEST_RESULT, type VaultRequestResult } from "./tools/vault.js";
