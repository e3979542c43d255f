export { CatalogHub } from "./catalog/catalog-hub.js";
export { PgCatalog } from "./catalog/pg-catalog.js";
export { createPrismaClient, type PrismaClient } from "./client.js";
export { connectionError, redact } from "./connect.js";
export { MIGRATIONS_DIR, type MigrateOptions, migrate, readMigrations } from "./migrate.js";
