-- The OAuth authorization server's state (oidc-provider's models: clients, grants, codes,
-- access and refresh tokens, interactions, sessions) and the connections users consented to
-- (CLOUD.md, "OAuth for MCP"). Every id is stored as its sha256 only: a database read gives no
-- usable token. `grant_id` (not a credential) ties a grant's tokens together for revocation;
-- `uid_hash` finds a session by its uid (the interaction checks its session's account).
CREATE TABLE "oauth_store" (
  "model" TEXT NOT NULL,
  "id_hash" TEXT NOT NULL,
  "payload" JSONB NOT NULL,
  "grant_id" TEXT,
  "uid_hash" TEXT,
  "expires_at" TIMESTAMPTZ(3),
  "consumed_at" TIMESTAMPTZ(3),
  CONSTRAINT "oauth_store_pkey" PRIMARY KEY ("model", "id_hash")
);
CREATE INDEX "oauth_store_grant_id_idx" ON "oauth_store"("grant_id");
CREATE INDEX "oauth_store_uid_hash_idx" ON "oauth_store"("uid_hash");
CREATE INDEX "oauth_store_expires_at_idx" ON "oauth_store"("expires_at");

-- A consented connection: which user let which client reach which group with which tools.
CREATE TABLE "oauth_connections" (
  "id" TEXT NOT NULL,
  "grant_id" TEXT NOT NULL,
  "client_id" TEXT NOT NULL,
  "client_name" TEXT,
  "user_id" TEXT NOT NULL,
  "workspace_id" TEXT NOT NULL,
  "group_id" TEXT NOT NULL,
  "tools" JSONB NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "revoked_at" TIMESTAMPTZ(3),
  CONSTRAINT "oauth_connections_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "oauth_connections_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "oauth_connections_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "oauth_connections_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "oauth_connections_grant_id_key" ON "oauth_connections"("grant_id");
CREATE INDEX "oauth_connections_workspace_id_user_id_idx" ON "oauth_connections"("workspace_id", "user_id");
