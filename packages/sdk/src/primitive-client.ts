import type { Transport } from "./transport.js";

/** What every per-type client shares: the transport and the primitive's route prefix. */
export abstract class PrimitiveClient {
  protected readonly base: string;

  constructor(
    protected readonly transport: Transport,
    /** The primitive's id. */
    readonly id: string,
  ) {
    this.base = `/v1/primitives/${encodeURIComponent(id)}`;
  }
}

/** One path segment, percent-encoded. */
export const seg = encodeURIComponent;
