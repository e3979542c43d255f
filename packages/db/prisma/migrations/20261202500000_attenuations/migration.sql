-- Offline attenuation (issue 41, item 3): a `pa_` token is recorded (by its sha256) when the
-- server first verifies its chain, with the audit entry `key.attenuate`; the primary key makes
-- that once across every process.
CREATE TABLE "attenuations" (
    "hash" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "caveats" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attenuations_pkey" PRIMARY KEY ("hash")
);

CREATE INDEX "attenuations_key_id_idx" ON "attenuations"("key_id");

ALTER TABLE "attenuations" ADD CONSTRAINT "attenuations_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
