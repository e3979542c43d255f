-- Operations per primitive per UTC day (the usage page's busiest primitives, `prim admin usage`'s
-- `top_primitives`): each api process counts the calls it admitted on a resolved primitive in
-- memory and adds them here with the minute's roll-up (CLOUD.md, "Limits and metering"), so a row
-- is the sum over processes. No foreign key to primitives: a deleted primitive's figures stay.
CREATE TABLE "usage_primitive_daily" (
  "workspace_id" TEXT NOT NULL,
  "day" DATE NOT NULL,
  "primitive_id" TEXT NOT NULL,
  "operations" BIGINT NOT NULL DEFAULT 0,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "usage_primitive_daily_pkey" PRIMARY KEY ("workspace_id", "day", "primitive_id"),
  CONSTRAINT "usage_primitive_daily_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
