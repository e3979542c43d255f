// s3rver on loopback: a real S3 protocol peer for tests (CLOUD.md: S3 in tests is s3rver).
// The package's types are ours (s3rver.d.ts), referenced so that every program reaching this
// file has them (apps/web's tests reach it through cells.ts).
/// <reference path="./s3rver.d.ts" />
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

export const TEST_BUCKET = "prim-test";

export async function startS3(): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), "prim-s3rver-"));
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: [{ name: TEST_BUCKET, configs: [] }],
  });
  const { port } = (await server.run()) as { port: number };
  // s3rver accepts any credentials; the SDK still wants some.
  process.env.AWS_ACCESS_KEY_ID ??= "S3RVER";
  process.env.AWS_SECRET_ACCESS_KEY ??= "S3RVER";
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
