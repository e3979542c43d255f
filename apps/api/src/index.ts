export { type ApiEnv, readApiEnv } from "./env.js";
export { base58, hashKey, isBase58, looksLikeApiKey, type NewApiKey, newApiKey } from "./keys/api-key.js";
