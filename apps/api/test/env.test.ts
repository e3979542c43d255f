import { describe, expect, it } from "vitest";
import { readApiEnv } from "../src/index.js";

describe("api configuration", () => {
  it("takes CLOUD.md's defaults", () => {
    const env = readApiEnv({});
    expect(env).toMatchObject({
      DATABASE_URL: "postgres://postgres@localhost:5432/prim",
      REDIS_URL: "redis://localhost:6379",
      PRIM_API_PORT: 8787,
      publicApiUrl: "http://localhost:8787",
      // Writes are answered once fsynced (issue 26): the cloud's default.
      PRIM_DURABILITY: "durable",
    });
    expect(readApiEnv({ PRIM_DURABILITY: "fast" }).PRIM_DURABILITY).toBe("fast");
    expect(() => readApiEnv({ PRIM_DURABILITY: "eventual" })).toThrow(/PRIM_DURABILITY/);
    // The limiter's Redis timeout: 50 ms unless set (suites in child processes set 2 s).
    expect(readApiEnv({}).PRIM_LIMITS_TIMEOUT_MS).toBeUndefined();
    expect(readApiEnv({ PRIM_LIMITS_TIMEOUT_MS: "2000" }).PRIM_LIMITS_TIMEOUT_MS).toBe(2000);
    expect(() => readApiEnv({ PRIM_LIMITS_TIMEOUT_MS: "soon" })).toThrow(/PRIM_LIMITS_TIMEOUT_MS/);
  });

  it("names every missing or malformed variable at once", () => {
    expect(() =>
      readApiEnv({
        DATABASE_URL: "mysql://x",
        PRIM_API_PORT: "http",
        PRIM_BLOBS: "s3",
        PRIM_MASTER_KEY: "short",
        PRIM_INTERNAL_SECRET: "tiny",
      }),
    ).toThrow(
      /invalid configuration:\n {2}DATABASE_URL: DATABASE_URL must be a postgres:\/\/ URL\n {2}PRIM_API_PORT: must be a port number \(0-65535\)\n.*PRIM_INTERNAL_SECRET.*\n.*PRIM_MASTER_KEY.*\n.*S3_BUCKET: S3_BUCKET is required when PRIM_BLOBS=s3/s,
    );
  });
});
