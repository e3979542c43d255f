import { toNextJsHandler } from "better-auth/next-js";
import { auth } from "@/server/auth";
import { withClientAddress } from "@/server/client-address";
import { webEnv } from "@/server/env";

export const dynamic = "force-dynamic";

/**
 * The session library's routes (CLOUD.md: `POST /api/auth/sign-up/email`, `/sign-in/email`, …),
 * each request carrying the client's address where the library looks for it (and nowhere else).
 */
export async function GET(request: Request) {
  const forwarded = await withClientAddress(request, webEnv());
  return toNextJsHandler(await auth()).GET(forwarded);
}

export async function POST(request: Request) {
  // The body is read before the first request's wait for the library to start.
  const forwarded = await withClientAddress(request, webEnv());
  return toNextJsHandler(await auth()).POST(forwarded);
}
