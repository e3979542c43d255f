import type { Invoker, OperationName } from "@prim/engine";
import type { ChangePage } from "@prim/wire";
import { ServiceError } from "@prim/wire";
import type { FastifyReply, FastifyRequest } from "fastify";
import { clientIpOf } from "./public-url.js";

/**
 * Change feeds as Server-Sent Events (`Accept: text/event-stream`): each change is an event
 * `change` whose `id` is the cursor right after it, so a reconnecting client's `Last-Event-ID`
 * resumes exactly there. The stream is a chain of long polls of the same operation (each counts
 * as one read, as REST's would); between them, when nothing changed, a comment keeps proxies from
 * closing an idle connection. The first read happens before the stream opens, so a bad cursor is
 * still an ordinary JSON error (400, 404, 409); a later refusal ends the stream with an `error`
 * event carrying the same `{ error: { code, message } }`.
 */

/** Whether the caller asked for an event stream rather than JSON. */
export function wantsEventStream(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === "string" && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

/** How long each read of the stream waits for a change (under the 30 s maximum of `wait`). */
const STREAM_WAIT = "25s";

export async function streamChanges(
  invoker: Invoker,
  op: OperationName,
  target: string | null,
  input: Record<string, unknown>,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const lastEventId = req.headers["last-event-id"];
  let after = typeof lastEventId === "string" && lastEventId !== "" ? lastEventId : input.after;
  const controller = new AbortController();
  const read = async (wait: string | number) =>
    (await invoker.invoke(
      req.principal,
      op,
      target,
      { ...input, wait, ...(after === undefined ? {} : { after }) },
      { requestId: req.id, clientIp: clientIpOf(req), signal: controller.signal },
    )) as ChangePage;
  let page = await read(0);
  reply.hijack();
  const raw = reply.raw;
  raw.once("close", () => controller.abort());
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  raw.write(": prim change feed\n\n");
  try {
    for (;;) {
      for (const entry of page.data)
        raw.write(`id: ${entry.cursor}\nevent: change\ndata: ${JSON.stringify(entry)}\n\n`);
      if (page.data.length === 0) raw.write(": waiting\n\n");
      after = page.cursor;
      if (controller.signal.aborted) break;
      page = await read(page.data.length > 0 ? 0 : STREAM_WAIT);
      if (controller.signal.aborted) break;
    }
  } catch (err) {
    if (!controller.signal.aborted) {
      const body =
        err instanceof ServiceError
          ? err.toJSON()
          : { error: { code: "internal_error", message: "the change feed failed; reconnect with Last-Event-ID" } };
      raw.write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    }
  }
  raw.end();
}
