export { createMcpApp, type McpApp, resourceMetadata } from "./app.js";
export { type McpEnv, readMcpEnv } from "./env.js";
export { main, startMcp } from "./start.js";
