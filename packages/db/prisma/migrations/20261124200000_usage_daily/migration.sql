-- Operations and storage per workspace per UTC day, rolled up from Redis's counters every
-- minute (CLOUD.md, "Limits and metering"): `operations` is the day's count (the latest figure
-- wins), `storage_bytes` the day's high-water mark.
CREATE TABLE "usage_daily" (
  "workspace_id" TEXT NOT NULL,
  "day" DATE NOT NULL,
  "operations" BIGINT NOT NULL DEFAULT 0,
  "storage_bytes" BIGINT NOT NULL DEFAULT 0,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "usage_daily_pkey" PRIMARY KEY ("workspace_id", "day"),
  CONSTRAINT "usage_daily_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
