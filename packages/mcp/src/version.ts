/** Reported in the MCP server's `serverInfo`. */
export const VERSION = "0.1.0";
