import { S3Client } from "@aws-sdk/client-s3";

/**
 * The cell's one S3 client. Path-style addressing and checksums only where an operation needs
 * them: S3-compatible servers (MinIO, s3rver, R2) reject or mangle the SDK's default CRC32
 * trailers on streamed bodies. Credentials come from the usual AWS variables.
 */
export function createS3Client(options: { endpoint?: string; region: string }): S3Client {
  return new S3Client({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}
