import { type Embedder, LOCAL_PRINCIPAL, type PrimitiveInfo, type Principal } from "@prim/engine";
import { startServer, type TestServer, type TestServerOptions } from "@prim/testkit/rest";

/** Every field of a memory record, sorted. */
export const MEMORY_FIELDS = [
  "created_at",
  "id",
  "kind",
  "metadata",
  "owner",
  "superseded_by",
  "supersedes",
  "tags",
  "text",
  "updated_at",
  "version",
];

export interface MemoryInput {
  kind: string;
  text: string;
  tags?: string[];
  owner?: string;
  metadata?: Record<string, unknown>;
  /** Change this memory instead (a new version). */
  id?: string;
  if_version?: number;
}

export interface MemoryServer extends TestServer {
  memory: PrimitiveInfo;
  base: string;
  /** POST `<base>/memories`; advances the clock 1 s first so memories have distinct times. */
  remember(input: MemoryInput, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  /** POST `<base>/recall`. */
  recall(body: Record<string, unknown>, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  /** Recall and return the texts in rank order. */
  recallTexts(body: Record<string, unknown>): Promise<string[]>;
}

async function createMemory(server: TestServer, name = "notes"): Promise<PrimitiveInfo> {
  await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  return server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name,
    type: "memory",
    group: "app",
  });
}

export function attachMemory(server: TestServer, memory: PrimitiveInfo): MemoryServer {
  const base = `/v1/primitives/${memory.id}`;
  const recall = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    server.api("POST", `${base}/recall`, body, headers);
  return {
    ...server,
    memory,
    base,
    remember(input, headers) {
      server.clock.advance(1000);
      return server.api("POST", `${base}/memories`, input, headers);
    },
    recall,
    async recallTexts(body) {
      const res = await recall(body);
      if (res.status !== 200) throw new Error(`recall answered ${res.status}: ${res.text}`);
      return res.body.data.map((m: { text: string }) => m.text);
    },
  };
}

/** A server with group `app` and a memory primitive `notes` in it. */
export async function withMemory(options: TestServerOptions = {}): Promise<MemoryServer> {
  const server = await startServer(options);
  return attachMemory(server, await createMemory(server));
}

/**
 * A server whose requests carrying `Authorization: Bearer scoped` run as a key of group `app`
 * with the tools set by `as(...)`; other requests run as the local account.
 */
export async function withScopedMemory() {
  let scoped: Principal = LOCAL_PRINCIPAL;
  const server = await withMemory({
    authenticate: (req) => (req.headers.authorization === "Bearer scoped" ? scoped : LOCAL_PRINCIPAL),
  });
  const group = (await server.api("GET", "/v1/groups/app")).body;
  const as = (tools: string[] | null) => {
    scoped = { kind: "scoped", workspace: "local", actor: "key:key_mem", groupId: group.id, tools };
  };
  const call = (method: string, path: string, body?: unknown) =>
    server.api(method, path, body, { authorization: "Bearer scoped" });
  return { ...server, as, call };
}

/** Like `withMemory`, with the engine opened with `embedder`. */
export async function withEmbeddedMemory(embedder: Embedder): Promise<MemoryServer> {
  return withMemory({ engineOptions: { embedder } });
}
