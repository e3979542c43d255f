import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ElicitResultSchema, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ToolContext } from "./context.js";

/** What a person answered in the client to a URL-mode elicitation (accept: they will open the URL). */
export type ElicitAction = "accept" | "decline" | "cancel";

/** Longest a client is given to show a URL elicitation and answer it (then it counts as cancel). */
export const ELICIT_TIMEOUT_MS = 10 * 60_000;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * The client-facing parts of one tool call's context: URL-mode elicitation when the client
 * declared `elicitation.url` (sent on the call's own stream, so it reaches the client that
 * called), its completion notice, progress when the call carried a progress token, and the
 * call's abort signal.
 */
export function callChannel(server: Server, extra: Extra): Pick<ToolContext, "elicitUrl" | "progress" | "signal"> {
  const url = server.getClientCapabilities()?.elicitation?.url !== undefined;
  const token = extra._meta?.progressToken;
  let step = 0;
  return {
    signal: extra.signal,
    ...(url
      ? {
          elicitUrl: async (params) => {
            let action: ElicitAction;
            try {
              const answer = await extra.sendRequest(
                { method: "elicitation/create", params: { mode: "url", ...params } },
                ElicitResultSchema,
                { timeout: ELICIT_TIMEOUT_MS, signal: extra.signal },
              );
              action = answer.action;
            } catch (err) {
              if (extra.signal.aborted) throw err;
              action = "cancel"; // no answer in time (or the client failed it): nothing was agreed
            }
            return {
              action,
              complete: () =>
                extra
                  .sendNotification({
                    method: "notifications/elicitation/complete",
                    params: { elicitationId: params.elicitationId },
                  })
                  .catch(() => undefined),
            };
          },
        }
      : {}),
    ...(token === undefined
      ? {}
      : {
          progress: (message) =>
            extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, progress: ++step, message },
              })
              .catch(() => undefined),
        }),
  };
}
