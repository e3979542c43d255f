// `npm run bench -- dashboard`: the dashboard's first loads on big data (issue 21, Performance):
// the primitives list of a group with 1,000 primitives and the kv browser of a kv with 100,000
// keys, each its server response through `next start` (tRPC over HTTP with a session cookie, the
// cell's internal invoke behind it), against the same page of data from the REST API with a
// workspace key (the peer, same run). Needs `npm run build` (apps/web's .next).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { createApiApp, readApiEnv } from "@prim/api";
import { createKey, createUser, createWorkspace, migrate } from "@prim/db";
import { listenInternal } from "@prim/http";
import { freshDatabase } from "@prim/testkit";
import { printFail, printRatio } from "./lib/verdict.js";

const WEB_DIR = fileURLToPath(new URL("../apps/web", import.meta.url));
const WEB_SERVER = join(WEB_DIR, "server.mjs");
const TARGET_MS = 300;
const SAMPLES = 40;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Sequential timings of `fetch(url)` (after two warm-ups), as p50 and p95 in ms. */
async function time(url: string, headers: Record<string, string>): Promise<{ p50: number; p95: number }> {
  const once = async () => {
    const start = performance.now();
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${(await res.text()).slice(0, 200)}`);
    await res.arrayBuffer();
    return performance.now() - start;
  };
  await once();
  await once();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) times.push(await once());
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
  return { p50: at(0.5), p95: at(0.95) };
}

/** The JavaScript a first load of `path` fetches (every script the HTML names), gzipped, in KiB. */
async function firstLoadJs(web: string, path: string, headers: Record<string, string>): Promise<number> {
  const html = await (await fetch(`${web}${path}`, { headers })).text();
  const scripts = new Set([...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1] as string));
  let bytes = 0;
  for (const src of scripts) {
    bytes += gzipSync(Buffer.from(await (await fetch(new URL(src, web))).arrayBuffer())).length;
  }
  return bytes / 1024;
}

const trpcUrl = (web: string, procedure: string, input: unknown) =>
  `${web}/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;

export async function run(): Promise<void> {
  if (!existsSync(join(WEB_DIR, ".next", "BUILD_ID"))) {
    printFail("apps/web is not built: run `npm run build` first");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "prim-bench-dashboard-"));
  const database = freshDatabase("bench_dashboard");
  await migrate({ databaseUrl: database.url });
  const secret = randomBytes(24).toString("hex");
  const api = await createApiApp(
    readApiEnv({
      DATABASE_URL: database.url,
      PRIM_DATA_DIR: join(dir, "data"),
      PRIM_BLOBS: `local:${join(dir, "blobs")}`,
      PRIM_API_PORT: "0",
      PRIM_LIMITS: "off",
      PRIM_INTERNAL_SECRET: secret,
    }),
  );
  let web: ChildProcess | undefined;
  try {
    const internalUrl = await listenInternal(api.internal as NonNullable<typeof api.internal>);
    const apiUrl = await api.app.listen({ port: 0, host: "127.0.0.1" });
    const port = await freePort();
    const webUrl = `http://127.0.0.1:${port}`;
    web = spawn(process.execPath, [WEB_SERVER, "-p", String(port), "-H", "127.0.0.1"], {
      cwd: WEB_DIR,
      detached: true,
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: "1",
        DATABASE_URL: database.url,
        PRIM_INTERNAL_SECRET: secret,
        PRIM_INTERNAL_URL: internalUrl,
        PRIM_DASHBOARD_URL: webUrl,
      },
    });

    // Data: a group with 1,000 kv primitives, one of them with 100,000 keys.
    const pool = api.hub.pool;
    // An operator-made user (verified at once: this bench measures pages, not sign-up), signed in.
    await createUser(pool, { email: "bench@prim.test", password: "bench password", name: "bench" });
    const signIn = async () => {
      for (let i = 0; i < 300; i++) {
        try {
          const res = await fetch(`${webUrl}/api/auth/sign-in/email`, {
            method: "POST",
            headers: { "content-type": "application/json", origin: webUrl },
            body: JSON.stringify({ email: "bench@prim.test", password: "bench password" }),
          });
          if (res.status === 200)
            return res.headers
              .getSetCookie()
              .map((c) => c.split(";")[0])
              .join("; ");
        } catch {
          // not up yet
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error("the dashboard did not start");
    };
    const cookie = await signIn();
    const user = (await pool.query<{ id: string }>("SELECT id FROM users WHERE email = 'bench@prim.test'")).rows[0];
    const { workspace } = await createWorkspace(pool, { name: "Bench", plan: "enterprise", ownerId: user?.id });
    const key = (await createKey(pool, { workspace: workspace.id })).key;
    const owner = { kind: "account" as const, workspace: workspace.id, actor: "bench", groupId: null, tools: null };
    await api.tenants.invoke(owner, "group.create", null, { name: "big" });
    const started = performance.now();
    let huge = "";
    for (let i = 0; i < 1000; i++) {
      const p = await api.tenants.invoke<{ id: string }>(owner, "primitive.create", null, {
        name: `p${String(i).padStart(4, "0")}`,
        type: "kv",
        group: "big",
      });
      if (i === 0) huge = p.id;
    }
    for (let batch = 0; batch < 1000; batch++) {
      const items = Array.from({ length: 100 }, (_, j) => ({
        key: `k${String(batch * 100 + j).padStart(6, "0")}`,
        value: { n: batch * 100 + j, note: "x".repeat(40) },
      }));
      await api.tenants.invoke(owner, "kv.mset", huge, { items });
    }
    console.log(`seeded 1,000 primitives and 100,000 keys in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const session = { cookie };
    const rest = { authorization: `Bearer ${key}` };
    const figures: [string, { p50: number; p95: number }, { p50: number; p95: number }][] = [
      [
        "primitives",
        await time(trpcUrl(webUrl, "data.primitives", { workspace: workspace.id, group: "big" }), session),
        await time(`${apiUrl}/v1/primitives?group=big&limit=50`, rest),
      ],
      [
        "kv_keys",
        await time(trpcUrl(webUrl, "data.kvList", { workspace: workspace.id, primitive: huge, prefix: "" }), session),
        await time(`${apiUrl}/v1/primitives/${huge}/keys?limit=50&values=true`, rest),
      ],
      [
        "kv_prefix",
        await time(
          trpcUrl(webUrl, "data.kvList", { workspace: workspace.id, primitive: huge, prefix: "k09" }),
          session,
        ),
        await time(`${apiUrl}/v1/primitives/${huge}/keys?limit=50&values=true&prefix=k09`, rest),
      ],
    ];
    const page = await time(`${webUrl}/w/${workspace.id}/data`, session);
    console.log(`RESULT dashboard_data_page_html_p50 ${page.p50.toFixed(1)} ms`);
    for (const [name, dashboard, peer] of figures) {
      console.log(`RESULT dashboard_${name}_p50 ${dashboard.p50.toFixed(1)} ms`);
      console.log(`RESULT dashboard_${name}_p95 ${dashboard.p95.toFixed(1)} ms`);
      console.log(`RESULT rest_${name}_p50 ${peer.p50.toFixed(1)} ms`);
    }
    for (const [name, path] of [
      ["sign_in", "/sign-in"],
      ["workspace", `/w/${workspace.id}`],
      ["data", `/w/${workspace.id}/data`],
      ["usage", `/w/${workspace.id}/usage`],
      ["billing", `/w/${workspace.id}/billing`],
    ] as const) {
      console.log(`RESULT web_first_load_js_${name} ${(await firstLoadJs(webUrl, path, session)).toFixed(1)} KiB`);
    }
    for (const [name, dashboard] of figures) {
      // Headroom: the target over the measured p95 (≥ 1 is within 300 ms).
      printRatio(`dashboard_${name}_headroom_300ms`, TARGET_MS / dashboard.p95, 1);
    }
  } finally {
    if (web?.pid !== undefined) {
      try {
        process.kill(-web.pid, "SIGTERM");
      } catch {
        // gone
      }
    }
    await api.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
