import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { startServer, type TestServerOptions } from "@prim/testkit/rest";

/** A server with group `app` and a queue primitive `jobs` in it. */
export async function withQueue(options: TestServerOptions = {}) {
  const server = await startServer(options);
  await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  const queue = await server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name: "jobs",
    type: "queue",
    group: "app",
  });
  const base = `/v1/primitives/${queue.id}`;
  const send = (q: string, body: Record<string, unknown>) => server.api("POST", `${base}/queues/${q}/messages`, body);
  const receive = (q: string, body: Record<string, unknown> = {}) =>
    server.api("POST", `${base}/queues/${q}/receive`, body);
  const settle = (q: string, job: string, body: Record<string, unknown>) =>
    server.api("POST", `${base}/queues/${q}/messages/${job}/ack`, body);
  const job = (q: string, id: string) => server.api("GET", `${base}/queues/${q}/messages/${id}`);
  return { ...server, queue, base, send, receive, settle, job };
}

export const JOB_FIELDS = [
  "attempts",
  "available_at",
  "body",
  "created_at",
  "dedupe_key",
  "id",
  "last_error",
  "lease_expires_at",
  "max_attempts",
  "priority",
  "queue",
  "status",
  "updated_at",
];

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
