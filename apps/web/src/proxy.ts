import { type NextRequest, NextResponse } from "next/server";

/**
 * The consent screen's URL takes a plain form POST (CLOUD.md, "Dashboard routes"); a page
 * cannot, so the POST is handed to its route handler at the same address.
 */
export function proxy(request: NextRequest) {
  const uid = /^\/oauth\/consent\/([^/]+)$/.exec(request.nextUrl.pathname)?.[1];
  if (request.method === "POST" && uid !== undefined) {
    return NextResponse.rewrite(new URL(`/api/oauth-consent/${uid}`, request.url));
  }
  return NextResponse.next();
}

export const config = { matcher: "/oauth/consent/:uid" };
