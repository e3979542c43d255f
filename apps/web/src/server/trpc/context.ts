import { currentUser } from "../auth";
import { cellCalls } from "../cell";
import { db } from "../db";
import { webEnv } from "../env";
import { sendMail } from "../mail";
import { primBilling, primDb, primInvoke } from "../prim";
import type { Context } from "./init";

let revocations: InstanceType<Awaited<ReturnType<typeof primDb>>["Revocations"]> | undefined;
let invoker: Context["invoker"] | undefined;
let cell: Context["cell"] | undefined;
let billing: Promise<Context["billing"]> | undefined;

/** Stripe billing when configured (the SDK and @prim/billing loaded once). */
function billingOf(env: ReturnType<typeof webEnv>): Promise<Context["billing"]> {
  billing ??= (async () => {
    if (env.STRIPE_SECRET_KEY === undefined) return null;
    const lib = await primBilling();
    return { lib, stripe: lib.createStripe({ secretKey: env.STRIPE_SECRET_KEY, apiUrl: env.STRIPE_API_URL }) };
  })();
  return billing;
}

/** The request's context: its signed-in user, the pool, @prim/db, the revocation fan-out, the invoker. */
export async function createContext(): Promise<Context> {
  const prim = await primDb();
  revocations ??= new prim.Revocations(webEnv().REDIS_URL);
  const publisher = revocations;
  const env = webEnv();
  invoker ??= new (await primInvoke()).RemoteInvoker({ url: env.PRIM_INTERNAL_URL, secret: env.PRIM_INTERNAL_SECRET });
  cell ??= cellCalls({ url: env.PRIM_INTERNAL_URL, secret: env.PRIM_INTERNAL_SECRET });
  return {
    user: await currentUser(),
    pool: db(),
    db: prim,
    publish: (message) => publisher.publish(message),
    invoker,
    cell,
    dashboardUrl: env.dashboardUrl,
    mail: sendMail,
    apiUrl: env.apiUrl,
    mcpUrl: env.mcpUrl,
    operations: (workspace, month) => publisher.operations(workspace, month),
    billing: await billingOf(env),
  };
}
