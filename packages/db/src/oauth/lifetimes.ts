/**
 * How long OAuth tokens for MCP last (CLOUD.md, "OAuth for MCP"), in seconds: apps/api's
 * authorization server issues them with these, and the dashboard's consent screen shows them.
 */
export const OAUTH_LIFETIMES = {
  /** An access token (`po_…`). */
  accessToken: 3600,
  /** A refresh token (`pr_…`): replaced on every use, each replacement valid this long again. */
  refreshToken: 30 * 24 * 3600,
} as const;
