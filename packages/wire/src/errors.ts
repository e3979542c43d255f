/** The spec's error table: every code the service can answer with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_request: 400,
  wrong_type: 400,
  invalid_token: 401,
  forbidden: 403,
  group_mismatch: 403,
  plan_limit: 403,
  tool_not_allowed: 403,
  secret_policy_denied: 403,
  not_found: 404,
  already_exists: 409,
  conflict: 409,
  branch_conflict: 409,
  fs_conflict: 409,
  lease_expired: 410,
  secret_grant_expired: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  paused: 423,
  rate_limited: 429,
  internal_error: 500,
  upstream_error: 502,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/**
 * The one error type that crosses the engine's boundary. `status` defaults to the table's,
 * and may be overridden only where the spec gives one code two statuses (`plan_limit`: 403 for
 * a missing feature, 429 for a used-up quota).
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (e.g. `Retry-After`, `Content-Range`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { status?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ServiceError";
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }

  toJSON(): ErrorBody {
    return { error: { code: this.code, message: this.message } };
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/**
 * Anything that is not a ServiceError is a system fault: it becomes 500 `internal_error`
 * with a fixed message, so no internals (paths, SQL, stack) leak to the caller.
 */
export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  return new ServiceError("internal_error", "internal error; safe to retry", { cause: err });
}

export const notFound = (what: string) => new ServiceError("not_found", `${what} not found`);
export const invalid = (message: string) => new ServiceError("invalid_request", message);
