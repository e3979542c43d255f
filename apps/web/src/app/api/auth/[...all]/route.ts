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
  return toNextJsHandler(await auth()).GET(withClientAddress(request, webEnv()));
}

export async function POST(request: Request) {
  return toNextJsHandler(await auth()).POST(withClientAddress(request, webEnv()));
}
