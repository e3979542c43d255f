-- Minted keys (issue 41, item 2): any key may mint a child at most as wide as itself
-- (`POST /v1/keys`). `parent_id` names the key that minted it (null: made by the operator or in
-- the dashboard) and `depth` its distance from such a root key (0 for a root; at most 8).
-- Revoking a key revokes its whole subtree, so no row is ever deleted under a live child: the
-- foreign key does nothing on delete (a workspace's deletion removes all its keys at once).
ALTER TABLE "api_keys" ADD COLUMN "parent_id" TEXT;
ALTER TABLE "api_keys" ADD COLUMN "depth" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "api_keys"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
CREATE INDEX "api_keys_parent_id_idx" ON "api_keys"("parent_id");
