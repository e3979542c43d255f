-- Read-only credentials (issue 40, item 3): a key or an OAuth connection may be made read-only;
-- `engine.invoke` then refuses every call whose operation declares it writes. Existing
-- credentials keep writing.
ALTER TABLE "api_keys" ADD COLUMN "read_only" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "oauth_connections" ADD COLUMN "read_only" BOOLEAN NOT NULL DEFAULT false;
