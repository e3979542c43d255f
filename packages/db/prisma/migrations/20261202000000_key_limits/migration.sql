-- Keys for agents (issue 41, item 1): a key may expire, may be bound to client addresses and may
-- carry an operation budget. Existing keys keep none of these (never expire, any address, no
-- budget). `ip_allow` is a JSON array of CIDRs; `budget` is `{"total": n}` or
-- `{"per": "day"|"month", "limit": n}` (counted in Redis, in the rate limit's script).
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
ALTER TABLE "api_keys" ADD COLUMN "ip_allow" JSONB;
ALTER TABLE "api_keys" ADD COLUMN "budget" JSONB;
