export { CatalogHub } from "./catalog/catalog-hub.js";
export { PgCatalog } from "./catalog/pg-catalog.js";
export { createPrismaClient, type PrismaClient } from "./client.js";
export { configurationError, controlPlaneEnv, portNumber, urlString } from "./config.js";
export { connectionError, inTransaction, openPool, redact } from "./connect.js";
export {
  createKey,
  createWorkspace,
  type KeyCreated,
  PLANS,
  type Plan,
  revokeKey,
  setPlan,
  type WorkspaceCreated,
} from "./control/admin.js";
export { base58, hashKey, isBase58, looksLikeApiKey, type NewApiKey, newApiKey } from "./control/api-key.js";
export { ApiKeyResolver } from "./control/key-resolver.js";
export { operationsKeyPrefix, planCacheKey, REVOKED_CHANNEL, Revocations } from "./control/revocation.js";
export { type DayUsage, readUsage, rollUpUsage, type UsageReport } from "./control/usage.js";
export {
  createUser,
  hashPassword,
  ROLES,
  type Role,
  type UserCreated,
  verifyPassword,
} from "./control/users.js";
export { MIGRATIONS_DIR, type MigrateOptions, migrate, readMigrations } from "./migrate.js";
