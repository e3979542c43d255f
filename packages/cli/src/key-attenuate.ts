import { parseArgs } from "node:util";
import { attenuate, type Caveat } from "@prim/sdk";
import { resolveApi } from "./credentials.js";
import { API_KEY_FLAG_WARNING, forgetEnvSecrets, readEnv } from "./env.js";

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `15m`, `1h`, `7d` in ms. */
export function parseDuration(text: string): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (match === null) throw new Error(`--expires-in: a duration such as 90s, 15m, 1h or 7d, not '${text}'`);
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

/** The caveats the flags ask for, in a fixed order (group, tools, read-only, expiry, addresses). */
export function caveatsOf(
  values: { group?: string; tools?: string[]; "read-only"?: boolean; "expires-in"?: string; ip?: string[] },
  now: number,
): Caveat[] {
  const list = (items: string[] | undefined) =>
    (items ?? [])
      .flatMap((item) => item.split(","))
      .map((s) => s.trim())
      .filter((s) => s !== "");
  const caveats: Caveat[] = [];
  if (values.group !== undefined) caveats.push({ type: "group", group: values.group });
  const tools = list(values.tools);
  if (tools.length > 0) caveats.push({ type: "tools", tools });
  if (values["read-only"]) caveats.push({ type: "read_only" });
  if (values["expires-in"] !== undefined)
    caveats.push({ type: "expires", at: now + parseDuration(values["expires-in"]) });
  const ips = list(values.ip);
  if (ips.length > 0) caveats.push({ type: "ip", cidrs: ips });
  return caveats;
}

/**
 * `prim key attenuate`: narrows a key (or a `pa_` token) offline — no request is made — and
 * prints the `pa_` token. The key: `--key`, else `PRIM_API_KEY`, else the stored one for the API.
 */
export async function keyAttenuate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      key: { type: "string" },
      api: { type: "string" },
      group: { type: "string" },
      tools: { type: "string", multiple: true },
      "read-only": { type: "boolean" },
      "expires-in": { type: "string" },
      ip: { type: "string", multiple: true },
      json: { type: "boolean" },
    },
    strict: true,
  });
  const env = readEnv();
  forgetEnvSecrets();
  if (values.key !== undefined) console.error(API_KEY_FLAG_WARNING);
  const now = Date.now();
  const caveats = caveatsOf(values, now);
  if (caveats.length === 0) {
    throw new Error("prim key attenuate: give at least one of --group, --tools, --read-only, --expires-in, --ip");
  }
  let token: string;
  try {
    const { key } = resolveApi(env, { api: values.api, key: values.key });
    token = await attenuate(key, caveats);
  } catch (err) {
    throw new Error(`prim key attenuate: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (values.json) console.log(JSON.stringify({ token, caveats }));
  else console.log(token);
}
