import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { PassThrough, type Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { type BlobStore, type Ingested, type IngestOptions, spoolUpload } from "@prim/engine";

const HASH_RE = /^[0-9a-f]{64}$/;

/**
 * A workspace's blobs in S3 under `<prefix><aa>/<sha256>` (one prefix per workspace: the
 * collector deletes what its own catalog does not name, so stores are never shared). An upload
 * is hashed while it is spooled to a private temp file, fsynced (`spoolUpload`, the local
 * store's too: memory stays flat whatever its size), then put under its hash unless that object
 * is already there.
 */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
    private readonly spoolDir: string = tmpdir(),
  ) {}

  private key(hash: string): string {
    if (!HASH_RE.test(hash)) throw new Error(`not a blob hash: ${hash}`);
    return `${this.prefix}${hash.slice(0, 2)}/${hash}`;
  }

  async ingest(
    source: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>,
    options: IngestOptions,
  ): Promise<Ingested> {
    const spooled = await spoolUpload(source, options, this.spoolDir, "prim-s3-");
    if (spooled.kind === "inline") return spooled;
    const { path, sha256, size } = spooled;
    try {
      const key = this.key(sha256);
      if (!(await this.exists(key))) {
        await this.s3.send(
          new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: createReadStream(path), ContentLength: size }),
        );
      }
      return { kind: "blob", hash: sha256, sha256, size };
    } finally {
      await rm(path, { force: true });
    }
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw err;
    }
  }

  async size(hash: string): Promise<number> {
    const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(hash) }));
    return head.ContentLength ?? 0;
  }

  read(hash: string, range?: { start: number; end: number }): Readable {
    const out = new PassThrough({ highWaterMark: 1024 * 1024 });
    const Range = range === undefined ? undefined : `bytes=${range.start}-${range.end}`;
    this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(hash), Range })).then(
      (res) => {
        const body = res.Body as Readable | undefined;
        if (body === undefined) return out.end();
        body.on("error", (err) => out.destroy(err));
        body.pipe(out);
      },
      (err: unknown) => out.destroy(err as Error),
    );
    return out;
  }

  async *list(): AsyncIterable<{ hash: string; mtimeMs: number }> {
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ContinuationToken: token }),
      );
      for (const item of page.Contents ?? []) {
        const hash = item.Key?.slice(item.Key.lastIndexOf("/") + 1) ?? "";
        if (HASH_RE.test(hash)) yield { hash, mtimeMs: item.LastModified?.getTime() ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async delete(hash: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(hash) }));
  }
}
