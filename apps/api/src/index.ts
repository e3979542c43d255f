export { createKey, createWorkspace, type KeyCreated, PLANS, revokeKey, type WorkspaceCreated } from "./admin.js";
export { type ApiApp, createApiApp } from "./app.js";
export { type ApiEnv, readApiEnv } from "./env.js";
export { base58, hashKey, isBase58, looksLikeApiKey, type NewApiKey, newApiKey } from "./keys/api-key.js";
export { ApiKeyResolver } from "./keys/resolver.js";
export { REVOKED_CHANNEL, Revocations } from "./keys/revocation.js";
export { WorkspaceEngines } from "./tenants.js";
