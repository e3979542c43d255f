export { MAX_INLINE_BYTES } from "./context.js";
export { mountMcp, parseToolPatterns } from "./http.js";
export { RemoteInvoker, type RemoteInvokerOptions } from "./remote-invoker.js";
export { createMcpServer, type McpServerOptions, visibleTools } from "./server.js";
export { proxyStdio, serveStdio } from "./stdio.js";
export { TOOLS, type ToolSpec } from "./tools/index.js";
