import { createHash } from "node:crypto";
import { createWorkspace } from "@prim/db";
import { call, startCloud, startS3, TEST_BUCKET, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let s3: Awaited<ReturnType<typeof startS3>>;
let cloud: TestCloud;
let key: string;

beforeAll(async () => {
  s3 = await startS3();
  cloud = await startCloud("s3", { PRIM_BLOBS: "s3", S3_ENDPOINT: s3.endpoint, S3_BUCKET: TEST_BUCKET });
  key = (await createWorkspace(cloud.api.hub.pool, { name: "S3" })).key;
});
afterAll(async () => {
  await cloud?.stop();
  await s3?.stop();
});

describe("the api with PRIM_BLOBS=s3", () => {
  it("stores a storage object's bytes in S3 and serves them back, whole and by range", async () => {
    await call(cloud.url, key, "POST", "/v1/groups", { name: "app" });
    const store = await call(cloud.url, key, "POST", "/v1/primitives", {
      name: "files",
      type: "storage",
      group: "app",
    });
    const body = Buffer.alloc(2 * 1024 * 1024, 7);
    body.write("prim", 100);
    const put = await fetch(`${cloud.url}/v1/primitives/${store.body.id}/objects/big.bin`, {
      method: "PUT",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/octet-stream" },
      body,
    });
    expect(put.status).toBeLessThan(300);
    const got = await fetch(`${cloud.url}/v1/primitives/${store.body.id}/objects/big.bin`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const bytes = Buffer.from(await got.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(createHash("sha256").update(body).digest("hex"));
    const part = await fetch(`${cloud.url}/v1/primitives/${store.body.id}/objects/big.bin`, {
      headers: { authorization: `Bearer ${key}`, range: "bytes=100-103" },
    });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("prim");
    // The blob is in the bucket under the workspace's prefix.
    const list = await fetch(`${s3.endpoint}/${TEST_BUCKET}?list-type=2&prefix=blobs/`);
    expect(await list.text()).toMatch(/<Key>blobs\/ws_[0-9a-z]+\/[0-9a-f]{2}\/[0-9a-f]{64}<\/Key>/);
  });
});
