-- Dashboard session tokens are kept as their sha256 in hex from now on (apps/web,
-- src/server/session-tokens.ts: the cookie carries the token, the row only its hash). Sessions
-- made before are hashed here, so nobody is signed out. A token is 32 letters and digits; a
-- hash is 64 hex characters, so running this twice changes nothing. No schema change.
UPDATE sessions SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex') WHERE token !~ '^[0-9a-f]{64}$';
