import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PrimClient, PrimError } from "@prim/sdk";
import { primCommand, startPrim as runPrim } from "@prim/testkit";
import { afterEach, describe, expect, it } from "vitest";

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-cli-"));
  dirs.push(dir);
  return dir;
}

/** Runs the real `prim dev` and waits for its "listening on" line. */
function startPrim(args: string[]) {
  return runPrim(primCommand(), ["dev", "--port", "0", ...args], children);
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.on("exit", (code) => resolve(code));
  });
}

describe("prim dev", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("keeps data across a restart and exits cleanly on %s", async (signal) => {
    const data = dataDir();
    const first = await startPrim(["--data", data]);
    const client = new PrimClient({ baseUrl: first.url });
    expect((await client.health()).ok).toBe(true);
    await client.groups.create("app");
    const kv = await client.primitives.create({ name: "cache", type: "kv", group: "app" });
    await client.kv(kv.id).set("greeting", { text: "hello" });
    await client.kv(kv.id).set("temp", 1, { ttl: "1h" });
    first.child.kill(signal);
    expect(await exited(first.child)).toBe(0);
    expect(first.output()).toContain("closing");

    const second = await startPrim(["--data", data]);
    const again = new PrimClient({ baseUrl: second.url });
    expect((await again.kv(kv.id).get("greeting")).value).toEqual({ text: "hello" });
    expect((await again.primitives.stats(kv.id)).items).toBe(2);
    expect((await again.groups.get("app")).primitives.map((p) => p.id)).toEqual([kv.id]);
    second.child.kill("SIGTERM");
    expect(await exited(second.child)).toBe(0);
  });

  it("requires the root token when started with one", async () => {
    const { url } = await startPrim(["--data", dataDir(), "--root-token", "tok-123"]);
    const anonymous = new PrimClient({ baseUrl: url });
    const err = await anonymous.groups.list().catch((e) => e);
    expect(err).toBeInstanceOf(PrimError);
    expect(err).toMatchObject({ status: 401, code: "invalid_token" });
    const root = new PrimClient({ baseUrl: url, token: "tok-123" });
    expect((await root.groups.list()).data).toEqual([]);
  });

  it("rejects unknown commands and bad flags", async () => {
    const prim = primCommand();
    const child = spawn(process.execPath, [...prim, "launch"], { stdio: "pipe" });
    children.push(child);
    expect(await exited(child)).toBe(1);
    const bad = spawn(process.execPath, [...prim, "dev", "--port", "nope"], { stdio: "pipe" });
    children.push(bad);
    expect(await exited(bad)).toBe(1);
  });
});
