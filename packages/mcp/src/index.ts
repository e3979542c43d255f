export { MAX_INLINE_BYTES } from "./context.js";
export { fenceData, unfenceData } from "./fence.js";
export { type McpMountOptions, mountMcp, parseToolPatterns } from "./http.js";
export { createMcpServer, type McpServerOptions, visibleTools } from "./server.js";
export { proxyStdio, serveStdio } from "./stdio.js";
export { checkToolAccess, derivedAccess, type OperationEffects, toolAnnotations } from "./tools/annotations.js";
export { OPERATION_EFFECTS } from "./tools/effects.js";
export { checkTools, TOOLS, type ToolSpec } from "./tools/index.js";
export { toolOutputSchema } from "./tools/output.js";
