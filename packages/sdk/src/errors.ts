import type { ErrorCode } from "@prim/wire";

/** An error answered by the service: the spec's `{ error: { code, message } }` and status. */
export class PrimError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly requestId: string | null;

  constructor(status: number, code: ErrorCode, message: string, requestId: string | null) {
    super(`${code}: ${message}`);
    this.name = "PrimError";
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }
}
