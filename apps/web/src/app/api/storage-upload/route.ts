import { TRPCError } from "@trpc/server";
import { NextResponse } from "next/server";
import { webEnv } from "@/server/env";
import { createContext } from "@/server/trpc/context";
import { createCallerFactory } from "@/server/trpc/init";
import { appRouter } from "@/server/trpc/router";

export const dynamic = "force-dynamic";

const caller = createCallerFactory(appRouter);
const HTTP: Partial<Record<TRPCError["code"], number>> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_REQUEST: 400,
};

/**
 * An upload from the storage browser: the browser cannot PUT to the API's origin (another
 * origin), so the file comes here and goes on to a signed PUT URL made by the same procedure
 * (`primitive.sign`: membership and role checked, the engine's scope and limits), streamed.
 */
export async function POST(request: Request) {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== new URL(webEnv().dashboardUrl).origin) {
    return NextResponse.json({ error: { code: "forbidden", message: "cross-site upload" } }, { status: 403 });
  }
  const query = new URL(request.url).searchParams;
  try {
    const signed = await caller(await createContext()).primitive.sign({
      workspace: query.get("workspace") ?? "",
      primitive: query.get("primitive") ?? "",
      key: query.get("key") ?? "",
      method: "PUT",
    });
    const put = await fetch(signed.url, {
      method: "PUT",
      body: request.body,
      headers: { "content-type": request.headers.get("content-type") ?? "application/octet-stream" },
      duplex: "half",
    } as RequestInit & { duplex: "half" });
    return new NextResponse(await put.text(), { status: put.status, headers: { "content-type": "application/json" } });
  } catch (err) {
    if (err instanceof TRPCError) {
      // The spec's code when the engine refused (`paused`, `forbidden`, …), else tRPC's.
      const code = (err.cause as { code?: unknown } | undefined)?.code;
      const status = (err.cause as { status?: unknown } | undefined)?.status;
      return NextResponse.json(
        { error: { code: typeof code === "string" ? code : err.code, message: err.message } },
        { status: typeof status === "number" ? status : (HTTP[err.code] ?? 400) },
      );
    }
    throw err;
  }
}
