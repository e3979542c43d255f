-- "Allow secret export" (issue 35, item 3): whether a group archive may carry this workspace's
-- vault values for a key other than its own. Off by default; only owners switch it (audited).
ALTER TABLE "workspaces" ADD COLUMN "secret_export" BOOLEAN NOT NULL DEFAULT false;
