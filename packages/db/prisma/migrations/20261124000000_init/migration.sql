-- The control plane's first tables: dashboard users (better-auth), workspaces, members, API
-- keys, and the engine's catalog (groups, primitives, snapshots, audit) one workspace per row.

CREATE TABLE "users" (
  "id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "email_verified" BOOLEAN NOT NULL DEFAULT false,
  "image" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

CREATE TABLE "sessions" (
  "id" TEXT NOT NULL,
  "expires_at" TIMESTAMPTZ(3) NOT NULL,
  "token" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "ip_address" TEXT,
  "user_agent" TEXT,
  "user_id" TEXT NOT NULL,
  CONSTRAINT "sessions_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "sessions_token_key" ON "sessions"("token");
CREATE INDEX "sessions_user_id_idx" ON "sessions"("user_id");

CREATE TABLE "accounts" (
  "id" TEXT NOT NULL,
  "account_id" TEXT NOT NULL,
  "provider_id" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "access_token" TEXT,
  "refresh_token" TEXT,
  "id_token" TEXT,
  "access_token_expires_at" TIMESTAMPTZ(3),
  "refresh_token_expires_at" TIMESTAMPTZ(3),
  "scope" TEXT,
  "password" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "accounts_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "accounts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "accounts_user_id_idx" ON "accounts"("user_id");

CREATE TABLE "verifications" (
  "id" TEXT NOT NULL,
  "identifier" TEXT NOT NULL,
  "value" TEXT NOT NULL,
  "expires_at" TIMESTAMPTZ(3) NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "verifications_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "verifications_identifier_idx" ON "verifications"("identifier");

CREATE TABLE "workspaces" (
  "id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "plan" TEXT NOT NULL DEFAULT 'starter',
  "rps" INTEGER,
  "burst" INTEGER,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "workspaces_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "members" (
  "workspace_id" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "role" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "members_pkey" PRIMARY KEY ("workspace_id", "user_id"),
  CONSTRAINT "members_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "members_user_id_idx" ON "members"("user_id");

CREATE TABLE "api_keys" (
  "id" TEXT NOT NULL,
  "hash" TEXT NOT NULL,
  "start" TEXT NOT NULL,
  "workspace_id" TEXT NOT NULL,
  "group_id" TEXT,
  "tools" JSONB,
  "name" TEXT,
  "created_by" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "last_used_at" TIMESTAMPTZ(3),
  "revoked_at" TIMESTAMPTZ(3),
  CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "api_keys_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");
CREATE INDEX "api_keys_workspace_id_idx" ON "api_keys"("workspace_id");

CREATE TABLE "groups" (
  "id" TEXT NOT NULL,
  "workspace_id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "namespace" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  CONSTRAINT "groups_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "groups_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "groups_workspace_id_name_key" ON "groups"("workspace_id", "name");

CREATE TABLE "primitives" (
  "id" TEXT NOT NULL,
  "workspace_id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "group_id" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  "paused" BOOLEAN NOT NULL DEFAULT false,
  "forked_from" JSONB,
  CONSTRAINT "primitives_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "primitives_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "primitives_group_id_type_name_key" ON "primitives"("group_id", "type", "name");
CREATE INDEX "primitives_workspace_id_id_idx" ON "primitives"("workspace_id", "id");

CREATE TABLE "snapshots" (
  "id" TEXT NOT NULL,
  "workspace_id" TEXT NOT NULL,
  "primitive_id" TEXT NOT NULL,
  "name" TEXT,
  "created_at" BIGINT NOT NULL,
  "blob_refs" TEXT[],
  CONSTRAINT "snapshots_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "snapshots_primitive_id_name_key" ON "snapshots"("primitive_id", "name");
CREATE INDEX "snapshots_primitive_id_id_idx" ON "snapshots"("primitive_id", "id");

-- Partitioned by day on ts (epoch ms); partitions are made ahead and dropped after 30 days by
-- prim_audit_partitions(now_ms) (src/audit-partitions.ts calls it).
CREATE TABLE "audit" (
  "seq" BIGSERIAL NOT NULL,
  "ts" BIGINT NOT NULL,
  "id" TEXT NOT NULL,
  "workspace_id" TEXT NOT NULL,
  "group_name" TEXT NOT NULL,
  "primitive" TEXT NOT NULL,
  "primitive_id" TEXT,
  "instance" TEXT,
  "actor" TEXT NOT NULL,
  "action" TEXT NOT NULL,
  "target" TEXT,
  "detail" JSONB,
  CONSTRAINT "audit_pkey" PRIMARY KEY ("ts", "seq")
) PARTITION BY RANGE ("ts");
CREATE INDEX "audit_workspace_id_seq_idx" ON "audit"("workspace_id", "seq" DESC);

CREATE FUNCTION prim_audit_partitions(now_ms BIGINT, keep_days INTEGER DEFAULT 30, ahead_days INTEGER DEFAULT 2)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  day_ms CONSTANT BIGINT := 86400000;
  today BIGINT := now_ms - (now_ms % day_ms);
  d BIGINT;
  part RECORD;
  dropped INTEGER := 0;
BEGIN
  FOR i IN 0..ahead_days LOOP
    d := today + i * day_ms;
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF audit FOR VALUES FROM (%s) TO (%s)',
      'audit_d' || (d / day_ms)::TEXT, d, d + day_ms);
  END LOOP;
  FOR part IN
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'audit'
  LOOP
    IF part.relname ~ '^audit_d[0-9]+$'
       AND substring(part.relname FROM 8)::BIGINT * day_ms + day_ms <= today - (keep_days - 1) * day_ms THEN
      EXECUTE format('DROP TABLE %I', part.relname);
      dropped := dropped + 1;
    END IF;
  END LOOP;
  RETURN dropped;
END $$;
