// The dashboard's procedures called in process, as the tests call them: a context with what a
// test names (its pool, invoker, API URL, …) and the rest as a quiet deployment (no mail, no
// Stripe, no live counter), and a caller of the whole router as a signed-in user.
import * as PrimDb from "@prim/db";
import { type Context, createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/** Everything but the signed-in user. */
export type TestContext = Omit<Context, "user">;

export function testContext(
  parts: Pick<TestContext, "pool" | "invoker" | "apiUrl"> & Partial<TestContext>,
): TestContext {
  return {
    db: PrimDb,
    publish: async () => {},
    dashboardUrl: "https://dash.prim.test",
    mail: async () => {},
    mcpUrl: "https://mcp.prim.test/mcp",
    operations: async () => null,
    billing: null,
    cell: {
      createWebhook: async () => {
        throw new Error("this test's context has no cell (pass `cell: cellCalls(…)`)");
      },
    },
    ...parts,
  };
}

const createCaller = createCallerFactory(appRouter);

/** The router's caller as `user` (null: nobody signed in). */
export function callerWith(context: TestContext, user: Context["user"]) {
  return createCaller({ ...context, user });
}
