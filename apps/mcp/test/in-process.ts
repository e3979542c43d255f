import { createMcpApp, type McpApp, readMcpEnv } from "../src/index.js";

/**
 * apps/mcp in this process, listening on loopback, over a cloud's Postgres and internal invoke
 * (`internalUrl`: the cell it falls back to), with the public URLs the tests name: the app and
 * its `/mcp` URL.
 */
export async function listeningMcp(cloud: {
  databaseUrl: string;
  internalUrl: string;
  secret: string | undefined;
}): Promise<{ mcp: McpApp; url: string }> {
  const mcp = await createMcpApp(
    readMcpEnv({
      DATABASE_URL: cloud.databaseUrl,
      PRIM_INTERNAL_URL: cloud.internalUrl,
      PRIM_INTERNAL_SECRET: cloud.secret,
      PRIM_PUBLIC_MCP_URL: "https://mcp.prim.test",
      PRIM_AUTH_URL: "https://api.prim.test/oauth",
    }),
  );
  return { mcp, url: `${await mcp.app.listen({ port: 0, host: "127.0.0.1" })}/mcp` };
}
