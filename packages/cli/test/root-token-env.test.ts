import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { primCommand, startPrim } from "@prim/testkit";
import { afterEach, describe, expect, it } from "vitest";

const TOKEN = "tok-from-env-7f3a9c";
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-cli-token-"));
  dirs.push(dir);
  return dir;
}

/** `prim dev` with an explicit environment; resolves at its "listening on" line. */
function startDev(args: string[], env: NodeJS.ProcessEnv) {
  const dir = tempDir();
  return startPrim(primCommand(), ["dev", "--port", "0", "--data", dir, ...args], children, env);
}

const envWithout = (name: string) => Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== name));

/** Linux: the direct children of a process and the environment each was started with. */
function childEnvironments(pid: number): string[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
  return children.map((child) => readFileSync(`/proc/${child}/environ`, "utf8"));
}

describe("prim dev takes the root token from PRIM_ROOT_TOKEN", () => {
  it("requires the token from the environment, with nothing on the command line", async () => {
    const { child, url, output } = await startDev([], { ...envWithout("PRIM_ROOT_TOKEN"), PRIM_ROOT_TOKEN: TOKEN });
    const anonymous = await fetch(`${url}/v1/groups`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as any).error.code).toBe("invalid_token");
    const root = await fetch(`${url}/v1/groups`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(root.status).toBe(200);
    expect((await fetch(`${url}/health?probe=1`)).status).toBe(200);
    if (process.platform === "linux") {
      expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8")).not.toContain(TOKEN);
    }
    expect(output()).not.toContain("warning");
  });

  it("does not hand the token to the SQL host processes it starts", async () => {
    if (process.platform !== "linux") return;
    const { child, url } = await startDev([], { ...envWithout("PRIM_ROOT_TOKEN"), PRIM_ROOT_TOKEN: TOKEN });
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const post = (path: string, body: unknown) =>
      fetch(url + path, { method: "POST", headers, body: JSON.stringify(body) }).then((r) => r.json() as any);
    await post("/v1/groups", { name: "app" });
    const db = await post("/v1/primitives", { name: "main", type: "db", group: "app" });
    // A write runs on a SQL host, which starts on first use.
    await post(`/v1/primitives/${db.id}/exec`, { sql: "create table t (x)" });
    const environments = childEnvironments(child.pid as number);
    expect(environments.length).toBeGreaterThan(0);
    for (const environ of environments) expect(environ).not.toContain(TOKEN);
  });

  it("still accepts --root-token, with a warning that flags show in ps", async () => {
    const { url, output } = await startDev(["--root-token", TOKEN], envWithout("PRIM_ROOT_TOKEN"));
    expect((await fetch(`${url}/v1/groups`)).status).toBe(401);
    expect((await fetch(`${url}/v1/groups`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect(output()).toContain("PRIM_ROOT_TOKEN");
  });
});
