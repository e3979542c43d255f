export { CatalogHub } from "./catalog/catalog-hub.js";
export { PgCatalog } from "./catalog/pg-catalog.js";
export {
  ALL_PLACEMENTS,
  announcePlacement,
  CELL_STATES,
  type CellRow,
  type CellState,
  claimPlacement,
  flipPlacement,
  freezePlacement,
  groupIdsOf,
  leftBehind,
  listCells,
  listPlacements,
  markReleased,
  type PlacementRow,
  placementsOn,
  placeWorkspace,
  readCell,
  readPlacement,
  recordShipped,
  registerCell,
  replacePlacement,
  setCellState,
  thawPlacement,
  workspaceExists,
} from "./cells/placements.js";
export { createPrismaClient, type PrismaClient, prismaOf } from "./client.js";
export { configurationError, controlPlaneEnv, portNumber, urlString } from "./config.js";
export { connectionError, inTransaction, openPool, redact } from "./connect.js";
export { type ActorName, resolveActors } from "./control/actors.js";
export { base58, hashKey, isBase58, looksLikeApiKey, type NewApiKey, newApiKey } from "./control/api-key.js";
export {
  type BillingState,
  billingState,
  customerOf,
  endGrace,
  lockSubscription,
  recordBillingEvent,
  type SubscriptionRow,
  saveCustomer,
  saveSubscription,
  startGrace,
  tagBillingEvent,
  withBillingLock,
  workspaceOfCustomer,
} from "./control/billing.js";
export { changesChannel, RedisChanges } from "./control/changes.js";
export {
  acceptInvitation,
  describeInvitation,
  INVITATION_TTL_MS,
  type Invitation,
  inviteMember,
  listInvitations,
  revokeInvitation,
} from "./control/invitations.js";
export { amountOf, type BudgetedKey, budgetCounter, budgetKey, KeyBudgets } from "./control/key-budgets.js";
export {
  checkBudget,
  checkExpiry,
  checkIpAllow,
  ipAllowWithin,
  ipMatcher,
  parseBudget,
  parseCidr,
  parseDuration,
  parseIpAllow,
} from "./control/key-limits.js";
export { type KeyAccess, type KeyCall, KeyManagement, keyCaller } from "./control/key-management.js";
export {
  type KeyScope,
  MAX_KEY_DEPTH,
  narrowBudget,
  narrowKey,
  patternCovers,
} from "./control/key-narrowing.js";
export { ApiKeyResolver, type ResolveContext } from "./control/key-resolver.js";
export {
  listMintedKeys,
  type MintInput,
  mintKey,
  revokeMintedKey,
} from "./control/key-tree.js";
export {
  checkTools,
  createKey,
  findGroup,
  type KeyCreated,
  type KeyLimits,
  type KeyListed,
  listKeys,
  revokeKey,
} from "./control/keys.js";
export { countLiveCells, readPlan, type WorkspacePlan } from "./control/limits.js";
export {
  addMember,
  checkRole,
  countOwners,
  listMembers,
  type Membership,
  membership,
  ROLES,
  type Role,
  removeMember,
  setMemberRole,
} from "./control/members.js";
export {
  type DueRow,
  dueOutboxRows,
  meteredWorkspaces,
  type OutboxPlanInput,
  type OutboxRow,
  outboxFailed,
  outboxSent,
  planOutbox,
} from "./control/meter-outbox.js";
export { type WorkspaceCounts, workspaceCounts } from "./control/overview.js";
export { checkPlan, expireGrace, PLANS, type Plan, setBillingPlan, setPlan } from "./control/plans.js";
export {
  operationsKeyPrefix,
  PLAN_CHANGED_PREFIX,
  planCacheKey,
  REVOKED_CHANNEL,
  Revocations,
} from "./control/revocation.js";
export { readSecretExport, type SecretExportSetting, setSecretExport } from "./control/secret-export.js";
export { type AttemptRule, type AttemptVerdict, SignInAttempts } from "./control/sign-in-attempts.js";
export {
  addPrimitiveUsage,
  counterMonth,
  type DayUsage,
  type PrimitiveDayUsage,
  type PrimitiveUsage,
  readUsage,
  rollUpUsage,
  STARTER_CAPS,
  type UsageMonth,
  type UsageReport,
  usageMonth,
} from "./control/usage.js";
export { createUser, hashPassword, type UserCreated, verifyPassword } from "./control/users.js";
export {
  type Attempt,
  type DeliveryInfo,
  type DueDelivery,
  disableWebhook,
  dueDeliveries,
  GIVE_UP_MS,
  type HeldEndpoint,
  holdEndpoints,
  listDeliveries,
  RETRY_DELAYS_MS,
  recordAttempt,
  recordDeliveries,
  redeliver,
  releaseEndpoint,
  renewEndpoint,
  webhookId,
} from "./control/webhook-deliveries.js";
export {
  type CreateWebhookInput,
  checkWebhookFilter,
  checkWebhookUrl,
  createWebhook,
  deleteWebhook,
  enableWebhook,
  getWebhook,
  listWebhooks,
  MAX_WEBHOOKS,
  openWebhookSecret,
  type WebhookFilter,
  type WebhookInfo,
} from "./control/webhooks.js";
export {
  type Actor,
  auditedTransaction,
  type ControlAction,
  type RecordAudit,
  recordWorkspaceAudit,
  recordWorkspaceMove,
  type WorkspaceAuditEntry,
} from "./control/workspace-audit.js";
export {
  type ClosedWorkspace,
  closeWorkspace,
  type DeletedWorkspace,
  deletedWorkspaces,
  dropWorkspace,
} from "./control/workspace-deletion.js";
export {
  consentWorkspaces,
  countPrimitives,
  createWorkspace,
  listGroups,
  readWorkspace,
  renameWorkspace,
  type WorkspaceCreated,
  workspacesOf,
} from "./control/workspaces.js";
export { MIGRATIONS_DIR, type MigrateOptions, migrate, readMigrations } from "./migrate.js";
export {
  type Connection,
  disconnect,
  endConnectionsIn,
  endConnectionsOf,
  grantRevocation,
  listConnections,
  recordConnection,
  revokeGrant,
  tokenRevocation,
} from "./oauth/connections.js";
export {
  acceptConsent,
  CONSENT_RESULT_TTL_MS,
  type ConsentDecision,
  type ConsentResult,
  checkConsent,
  describeAuthorization,
  type PendingAuthorization,
  savePendingAuthorization,
  signConsent,
} from "./oauth/consent.js";
export {
  consentDecisionFromForm,
  consentTools,
  EVERY_TOOL_FIELD,
  EVERY_TOOL_VALUE,
  READ_ONLY_FIELD,
} from "./oauth/consent-form.js";
export { OAUTH_LIFETIMES } from "./oauth/lifetimes.js";
export { oauthSigningKey } from "./oauth/signing-key.js";
export { hashId, postgresOidcAdapter, purgeExpiredOAuth } from "./oauth/store.js";
export { looksLikeAccessToken, OAuthTokenResolver } from "./oauth/tokens.js";
