import { currentUser } from "../auth";
import { db } from "../db";
import { webEnv } from "../env";
import { primDb } from "../prim";
import type { Context } from "./init";

let revocations: InstanceType<Awaited<ReturnType<typeof primDb>>["Revocations"]> | undefined;

/** The request's context: its signed-in user, the pool, @prim/db and the revocation fan-out. */
export async function createContext(): Promise<Context> {
  const prim = await primDb();
  revocations ??= new prim.Revocations(webEnv().REDIS_URL);
  const publisher = revocations;
  return { user: await currentUser(), pool: db(), db: prim, publish: (message) => publisher.publish(message) };
}
