import { parseArgs } from "node:util";
import { budgetOfText } from "@prim/wire";
import { resolveApi } from "./credentials.js";
import { API_KEY_FLAG_WARNING, forgetEnvSecrets, readEnv } from "./env.js";
import { parseDuration } from "./key-attenuate.js";
import { redactKeys } from "./login-command.js";

/**
 * `prim key mint|list|revoke`: minted keys (cloud, `POST/GET/DELETE /v1/keys`) with the key
 * other commands use (`--key`, else `PRIM_API_KEY`, else the one `prim login` stored). A minted
 * key is printed once, by `mint`; error messages never carry a key.
 */

const TIMEOUT_MS = 15_000;

interface KeyInfo {
  id: string;
  start?: string;
  name: string | null;
  group: string | null;
  tools: string[] | null;
  read_only: boolean;
  parent: string;
  depth?: number;
  revoked_at?: number | null;
}

async function request(api: string, key: string, method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${api}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new Error(`could not reach ${api}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const answer: unknown = await res.json().catch(() => undefined);
  if (res.ok) return answer;
  const error = (answer as { error?: { code?: string; message?: string } } | undefined)?.error;
  throw new Error(
    `${api} answered ${res.status} ${error?.code ?? `http_${res.status}`}: ${error?.message ?? res.statusText}`,
  );
}

/** `group app, tools kv_get, read-only`. */
function scopeOf(key: KeyInfo): string {
  const group = key.group === null ? "every group" : `group ${key.group}`;
  const tools = key.tools === null ? "every tool" : `tools ${key.tools.join(",")}`;
  return `${group}, ${tools}${key.read_only ? ", read-only" : ""}`;
}

export async function keyCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        api: { type: "string" },
        key: { type: "string" },
        json: { type: "boolean" },
        name: { type: "string" },
        group: { type: "string" },
        tools: { type: "string" },
        "read-only": { type: "boolean" },
        "expires-in": { type: "string" },
        "ip-allow": { type: "string" },
        budget: { type: "string" },
      },
      allowPositionals: sub === "revoke",
      strict: true,
    });
    const env = readEnv();
    forgetEnvSecrets();
    if (values.key !== undefined) console.error(API_KEY_FLAG_WARNING);
    const { api, key } = resolveApi(env, { api: values.api, key: values.key });
    const print = (json: unknown, text: string) => console.log(values.json ? JSON.stringify(json) : text);
    if (sub === "mint") {
      const body: Record<string, unknown> = {};
      if (values.name !== undefined) body.name = values.name;
      if (values.group !== undefined) body.group = values.group;
      if (values.tools !== undefined)
        body.tools = values.tools
          .split(",")
          .map((t) => t.trim())
          .filter((t) => t !== "");
      if (values["read-only"]) body.read_only = true;
      if (values["expires-in"] !== undefined) body.expires_at = Date.now() + parseDuration(values["expires-in"]);
      if (values["ip-allow"] !== undefined) body.ip_allow = values["ip-allow"].split(",").map((c) => c.trim());
      if (values.budget !== undefined) {
        body.budget = budgetOfText(values.budget);
        if (body.budget === undefined) throw new Error(`--budget '${values.budget}' is not N, N/day or N/month`);
      }
      const minted = (await request(api, key, "POST", "/v1/keys", body)) as KeyInfo & { key: string };
      // The key goes to stdout only, once; the line before says what it may do.
      print(
        minted,
        `minted ${minted.id} (${scopeOf(minted)}; parent ${minted.parent}); the key, shown once:\n${minted.key}`,
      );
    } else if (sub === "list") {
      const { data } = (await request(api, key, "GET", "/v1/keys")) as { data: KeyInfo[] };
      const lines = data.map(
        (k) =>
          `${k.id}  ${k.start}…  ${k.name ?? "-"}  ${scopeOf(k)}  parent ${k.parent}${k.revoked_at ? "  revoked" : ""}`,
      );
      print({ data }, lines.length === 0 ? "no keys minted under this key" : lines.join("\n"));
    } else if (sub === "revoke") {
      const [id] = positionals;
      if (id === undefined || positionals.length > 1) throw new Error("name one key id: prim key revoke key_…");
      const done = (await request(api, key, "DELETE", `/v1/keys/${encodeURIComponent(id)}`)) as { revoked: string[] };
      print(done, `revoked ${done.revoked.join(", ")}`);
    } else throw new Error("mint, list, revoke or attenuate");
  } catch (err) {
    throw new Error(`prim key ${sub ?? ""}: ${redactKeys(err instanceof Error ? err.message : String(err))}`);
  }
}
