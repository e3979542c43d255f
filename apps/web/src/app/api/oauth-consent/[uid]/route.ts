import { NextResponse } from "next/server";
import { currentUser } from "@/server/auth";
import { decideConsent } from "@/server/consent";
import { webEnv } from "@/server/env";

export const dynamic = "force-dynamic";

const back = (to: string) => NextResponse.redirect(to, 303);

/**
 * The consent form's POST (`/oauth/consent/<uid>` is rewritten here by the proxy): signed in,
 * from this origin (a cross-site POST carries no session cookie, SameSite=Lax; an `Origin` of
 * another site is refused anyway), the decision checked and signed, the browser sent on to the
 * authorization server. A refused choice goes back to the screen with the reason.
 */
export async function POST(request: Request, { params }: { params: Promise<{ uid: string }> }) {
  const { uid } = await params;
  const env = webEnv();
  const screen = `${env.dashboardUrl}/oauth/consent/${encodeURIComponent(uid)}`;
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== new URL(env.dashboardUrl).origin) {
    return NextResponse.json({ error: { code: "forbidden", message: "cross-site form post" } }, { status: 403 });
  }
  const user = await currentUser();
  if (user === null) return back(`${env.dashboardUrl}/sign-in?next=${encodeURIComponent(`/oauth/consent/${uid}`)}`);
  try {
    return back(await decideConsent(uid, user.id, await request.formData()));
  } catch (err) {
    const message = err instanceof Error && "code" in err ? err.message : "something went wrong; try again";
    return back(`${screen}?error=${encodeURIComponent(message)}`);
  }
}
