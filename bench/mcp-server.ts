// Child process for bench/mcp-cloud.ts: apps/mcp alone, over the cell's internal listener that
// bench/cloud-kv-server.ts (mode `mcp`) started — two processes, as apps/mcp and apps/api run.
// Protocol over IPC:
//   parent → child  { type: "start", databaseUrl, internalUrl, secret }
//   child → parent  { type: "ready", port }
//   parent → child  { type: "cpu" } / { type: "stop" } (lib/serve-parent.ts)
import { createMcpApp, readMcpEnv } from "@prim/mcp-server";
import { serveParent } from "./lib/serve-parent.js";

export type McpParentMessage =
  | { type: "start"; databaseUrl: string; internalUrl: string; secret: string }
  | { type: "cpu" }
  | { type: "stop" };
export type McpChildMessage = { type: "ready"; port: number } | { type: "cpu"; user: number; system: number };

let close: () => Promise<void> = async () => {};
serveParent({
  stop: async () => {
    await close().catch(() => {});
    process.exit(0);
  },
  onMessage: (raw) => {
    const message = raw as Extract<McpParentMessage, { type: "start" }>;
    if (message.type !== "start") return;
    void (async () => {
      const mcp = await createMcpApp(
        readMcpEnv({
          DATABASE_URL: message.databaseUrl,
          PRIM_INTERNAL_URL: message.internalUrl,
          PRIM_INTERNAL_SECRET: message.secret,
        }),
      );
      close = () => mcp.close();
      await mcp.app.listen({ port: 0, host: "127.0.0.1" });
      const address = mcp.app.server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      process.send?.({ type: "ready", port } satisfies McpChildMessage);
    })().catch((err: unknown) => {
      console.error("mcp-server:", err);
      process.exit(1);
    });
  },
});
