import { toNextJsHandler } from "better-auth/next-js";
import { auth } from "@/server/auth";

export const dynamic = "force-dynamic";

/** The session library's routes (CLOUD.md: `POST /api/auth/sign-up/email`, `/sign-in/email`, …). */
export async function GET(request: Request) {
  return toNextJsHandler(await auth()).GET(request);
}

export async function POST(request: Request) {
  return toNextJsHandler(await auth()).POST(request);
}
