import { describe, expect, it } from "vitest";
import { withQueue } from "./queue-helpers.js";

describe("queue: listing and purging by status", () => {
  it("pages each status in send order, keeps queues apart, purges only finished jobs", async () => {
    const s = await withQueue();
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await s.send("a", { body: i, max_attempts: 1 })).body.id);
    await s.send("b", { body: "other queue" });
    // Jobs 0..5 leased; 0, 1 acked (done); 2, 3 failed on their only attempt (dead); 4, 5 stay leased.
    const leased = (await s.receive("a", { max: 6 })).body.data as { id: string; lease_token: string }[];
    expect(leased.map((j) => j.id)).toEqual(ids.slice(0, 6));
    for (const j of leased.slice(0, 2)) await s.settle("a", j.id, { lease_token: j.lease_token });
    for (const j of leased.slice(2, 4)) await s.settle("a", j.id, { lease_token: j.lease_token, action: "fail" });

    const list = async (status: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await s.api(
          "GET",
          `${s.base}/queues/a/messages?status=${status}&limit=1${cursor === null ? "" : `&cursor=${cursor}`}`,
        );
        expect(page.status).toBe(200);
        for (const job of page.body.data as { id: string; status: string }[]) {
          expect(job.status).toBe(status);
          seen.push(job.id);
        }
        cursor = page.body.next_cursor;
      } while (cursor !== null);
      return seen;
    };
    expect(await list("done")).toEqual(ids.slice(0, 2));
    expect(await list("dead")).toEqual(ids.slice(2, 4));
    expect(await list("leased")).toEqual(ids.slice(4, 6));
    expect(await list("ready")).toEqual(ids.slice(6, 8));
    expect((await s.api("GET", `/v1/primitives/${s.queue.id}/stats`)).body.items).toBe(5); // 2 leased + 2 + 1 ready

    s.clock.advance(1000);
    const purged = await s.api("POST", `${s.base}/queues/a/purge`, { status: "done" });
    expect(purged.body).toEqual({ purged: 2 });
    expect(await list("done")).toEqual([]);
    expect(await list("dead")).toEqual(ids.slice(2, 4));
    expect((await s.api("POST", `${s.base}/queues/a/purge`, { status: "dead", older_than: "1h" })).body).toEqual({
      purged: 0,
    });
    expect((await s.api("POST", `${s.base}/queues/a/purge`, { status: "dead" })).body).toEqual({ purged: 2 });
    expect((await s.api("GET", `${s.base}/queues/b/messages?status=ready`)).body.data).toHaveLength(1);
  });
});
