// The root README's local quick start, run as a reader runs it: `prim dev` started the way
// `npm start` starts it, then every shell block of the quick start pasted in order into one bash
// at the repo root, with curl failing on any HTTP error. The answers that matter are checked.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT, startPrim } from "@prim/testkit";
import { afterEach, describe, expect, it } from "vitest";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const BEGIN = "<!-- quickstart:";
const END = "<!-- quickstart: end -->";

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The ```sh blocks of a piece of Markdown, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

/** A block's commands: continuation lines (`\` at the end) joined, blank lines dropped. */
function commands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

/** The quick start's commands, between its two markers. */
function quickStartCommands(readme: string): string[] {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin === -1 || end === -1 || end < begin) throw new Error(`README.md: no ${BEGIN} … ${END} section`);
  return shellBlocks(readme.slice(begin, end)).flatMap(commands);
}

/**
 * The script bash runs: curl fails on HTTP errors (printing the error body), and each command
 * prints a marker line first so its output can be told apart. The vault's `fetch` goes out to the
 * internet: its failure is recorded instead of ending the script (checked below either way).
 */
function script(cmds: string[]): string {
  const lines = ["set -euo pipefail", 'curl() { command curl -sS --fail-with-body "$@"; }'];
  cmds.forEach((cmd, i) => {
    lines.push(`printf '\\n@@%d\\n' ${i}`);
    lines.push(/\/fetch /.test(cmd) ? `${cmd} || printf '\\n@@failed %d\\n' $?` : cmd);
  });
  return `${lines.join("\n")}\n`;
}

function runBash(text: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const bash = spawn("bash", ["-c", text], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    children.push(bash);
    let stdout = "";
    let stderr = "";
    bash.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    bash.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    bash.on("error", reject);
    bash.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Each command's output by its index, from the markers. */
function outputs(stdout: string): Map<number, string> {
  const out = new Map<number, string>();
  const parts = stdout.split(/\n@@(\d+)\n/);
  for (let i = 1; i < parts.length; i += 2) out.set(Number(parts[i]), (parts[i + 1] ?? "").trim());
  return out;
}

describe("the README's local quick start", () => {
  it("keeps its two commands, and `npm start` is `prim dev`", () => {
    const quickStart = README.slice(README.indexOf("## Quick start"), README.indexOf(BEGIN));
    const first = shellBlocks(quickStart)[0] ?? "";
    expect(commands(first).map((line) => line.replace(/\s+#.*$/, ""))).toEqual(["npm ci && npm start", "npm test"]);
    const start = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start;
    expect(start).toBe("node packages/cli/bin/prim.js dev");
  });

  it("runs as written, in order, against a fresh `npm start`", async () => {
    const [node, ...args] = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start.split(" ");
    expect(node).toBe("node");
    if (!existsSync(join(ROOT, "packages/cli/dist/main.js"))) {
      throw new Error("packages/cli/dist is not built: npm ci's prepare builds it (or npm run build)");
    }
    const data = mkdtempSync(join(tmpdir(), "prim-readme-"));
    dirs.push(data);
    // `npm start` with the port and data directory a reader would take from the environment.
    const env: NodeJS.ProcessEnv = { ...process.env, PRIM_PORT: "0", PRIM_DATA_DIR: data };
    delete env.PRIM_ROOT_TOKEN;
    const dev = await startPrim([args[0] as string], args.slice(1), children, env);
    const port = new URL(dev.url).port;

    const cmds = quickStartCommands(README).map((cmd) => cmd.replaceAll("localhost:7777", `localhost:${port}`));
    const before = new Set(readdirSync(ROOT));
    const run = await runBash(script(cmds), process.env);
    const out = outputs(run.stdout);
    if (run.code !== 0) {
      const at = Math.max(-1, ...out.keys());
      expect.fail(`the quick start failed at\n  ${cmds[at]}\nwhich answered\n  ${out.get(at)}\n${run.stderr}`);
    }
    expect(readdirSync(ROOT).filter((name) => !before.has(name))).toEqual([]);

    /** The output of the one command matching `pattern`. */
    const of = (pattern: RegExp): string => {
      const found = cmds.flatMap((cmd, i) => (pattern.test(cmd) ? [i] : []));
      expect(found, `README.md quick start: exactly one command matching ${pattern}`).toHaveLength(1);
      return out.get(found[0] as number) ?? "";
    };
    const json = (pattern: RegExp) => JSON.parse(of(pattern));

    expect(json(/^curl localhost:\d+\/v1\/primitives\/\$KV\/keys\/user\/1(\s|$)/).value).toEqual({ name: "Ada" });
    expect(json(/select \* from users where id = \?/).rows).toEqual([{ id: 1, name: "Ada" }]);
    expect(json(/\$COPY\/query/).rows).toEqual([{ n: 2 }]);
    expect(of(/^curl "\$URL"/)).toBe("Hello from Prim");
    expect(json(/\/messages\/\$JOB\/ack /).status).toBe("done");
    expect(json(/\$JOBS\/queues(\s|$)/).data).toEqual([
      { name: "emails", ready: 2, delayed: 1, leased: 0, done: 1, dead: 0 },
    ]);
    expect(json(/\/search\?q=/).data.map((hit: { path: string }) => hit.path)).toEqual(["/docs/readme.md"]);
    const recalled = json(/\$MEM\/recall /).data;
    expect(recalled[0]).toMatchObject({ text: "We deploy on Tuesdays and Thursdays" });
    expect(recalled[0].score).toBeGreaterThan(0);

    // The vault: the value is put once and shows in no answer; the grant is listed.
    const put = cmds.find((cmd) => /\/secrets\/HTTPBIN_TOKEN /.test(cmd)) ?? "";
    const value = /"value":"([^"]+)"/.exec(put)?.[1] ?? "";
    expect(value.length).toBeGreaterThan(8);
    expect(run.stdout).not.toContain(value);
    expect(json(/^curl localhost:\d+\/v1\/primitives\/\$VAULT\/secrets(\s|$)/).data).toMatchObject([
      { name: "HTTPBIN_TOKEN", version: 1, grant: { hosts: ["httpbin.org"], methods: ["GET"] } },
    ]);
    // Online, httpbin.org echoes the token it got and the answer has it redacted; offline the
    // grant let the request go and only the name lookup failed (502), never a 403 or 404.
    const fetched = of(/\/fetch /);
    if (fetched.includes("@@failed")) {
      expect(JSON.parse(fetched.split("\n")[0] as string).error).toMatchObject({
        code: "upstream_error",
        message: expect.stringMatching(/could not resolve host 'httpbin\.org'|timed out|connect/),
      });
    } else {
      // httpbin.org answered (any status is its own; a 200 is the echo, with the token redacted).
      const answer = JSON.parse(fetched);
      expect(answer.status).toEqual(expect.any(Number));
      if (answer.status === 200) expect(answer.body).toContain("[REDACTED:HTTPBIN_TOKEN]");
    }
  }, 120_000);
});

describe("the README and docs/", () => {
  /** The root README, docs/*.md and every package's, app's and folder's README. */
  const files = [
    "README.md",
    ...readdirSync(join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
    ...["packages", "apps"].flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .map((name) => `${dir}/${name}/README.md`)
        .filter((f) => existsSync(join(ROOT, f))),
    ),
    "infra/README.md",
    "bench/README.md",
  ];

  it("link only to files in the repository", () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), "utf8");
      if (text.includes("../shared")) broken.push(`${file}: mentions ../shared`);
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (target === undefined || /^(https?:|mailto:|#)/.test(target)) continue;
        const path = resolve(join(ROOT, dirname(file)), (target.split("#")[0] as string) || ".");
        const inside = !relative(ROOT, path).startsWith("..");
        if (!inside || !existsSync(path)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
    expect(files).toContain("docs/api.md");
  });
});
