// A signed URL's max_uses across processes: two api cells as child processes (startProbeCloud);
// the workspace lives on cell-a, so cell-b forwards its signed requests there and the uses are
// counted in the store's one file. A burst sent half to each process lets exactly max_uses through.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";

let cloud: ProbeCloud;
let ws: ProbeWorkspace;
let storeId: string;

beforeAll(async () => {
  cloud = await startProbeCloud("signed_uses");
  ws = await cloud.workspace("signed-uses", "enterprise", { on: "cell-a" });
  const a = cloud.cell("cell-a").url;
  await ok(a, ws.key, "POST", "/v1/groups", { name: "app" });
  storeId = (await ok(a, ws.key, "POST", "/v1/primitives", { name: "files", type: "storage", group: "app" })).id;
}, 120_000);
afterAll(async () => {
  await cloud?.stop();
});

/** The URL's path sent to each cell in turn: `n` requests at once, half through each process. */
function burst(path: string, n: number, init: RequestInit = {}): Promise<Response[]> {
  const entries = [cloud.cell("cell-a").url, cloud.cell("cell-b").url];
  return Promise.all(Array.from({ length: n }, (_, i) => fetch(`${entries[i % 2]}${path}`, init)));
}

describe("signed URLs with max_uses across cells", () => {
  it("lets exactly max_uses of 20 concurrent GETs through, half of them sent to the other process", async () => {
    expect(ws.cell).toBe("cell-a");
    const b = cloud.cell("cell-b").url;
    // Made through the process that does not own the workspace: presign is forwarded too.
    const up = await fetch(`${b}/v1/primitives/${storeId}/objects/shared.txt`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "text/plain" },
      body: "five downloads",
    });
    expect(up.status).toBe(200);
    const grant = await ok(b, ws.key, "POST", `/v1/primitives/${storeId}/presign`, { key: "shared.txt", max_uses: 5 });
    expect(grant.max_uses).toBe(5);
    const path = new URL(grant.url).pathname;
    const answers = await burst(path, 20);
    const bodies = await Promise.all(answers.map((r) => r.text()));
    const served = answers.flatMap((r, i) => (r.status === 200 ? [bodies[i]] : []));
    expect(served).toEqual(Array(5).fill("five downloads"));
    for (const [i, r] of answers.entries()) {
      if (r.status !== 200) {
        expect(r.status).toBe(403);
        expect(JSON.parse(bodies[i] as string).error.code).toBe("forbidden");
      }
    }
    // Used up through either process; a fresh URL for the same object works through both.
    for (const entry of [cloud.cell("cell-a").url, b]) expect((await fetch(`${entry}${path}`)).status).toBe(403);
    const fresh = await ok(b, ws.key, "POST", `/v1/primitives/${storeId}/presign`, { key: "shared.txt" });
    for (const entry of [cloud.cell("cell-a").url, b]) {
      const res = await fetch(`${entry}${new URL(fresh.url).pathname}`);
      expect(await res.text()).toBe("five downloads");
    }
  }, 60_000);

  it("lets exactly one of 10 concurrent PUTs with max_uses=1 store its body", async () => {
    const a = cloud.cell("cell-a").url;
    const grant = await ok(a, ws.key, "POST", `/v1/primitives/${storeId}/presign`, {
      key: "once.bin",
      method: "PUT",
      max_uses: 1,
      max_bytes: 64,
    });
    const path = new URL(grant.url).pathname;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${i % 2 === 0 ? a : cloud.cell("cell-b").url}${path}`, { method: "PUT", body: `upload ${i}` }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 403)).toHaveLength(9);
    const winner = statuses.indexOf(200);
    const stored = await fetch(`${a}/v1/primitives/${storeId}/objects/once.bin`, {
      headers: { authorization: `Bearer ${ws.key}` },
    });
    expect(await stored.text()).toBe(`upload ${winner}`);
  }, 60_000);
});
