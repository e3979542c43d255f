import { createReadStream } from "node:fs";
import { open, rename } from "node:fs/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { GroupInfo, ImportResult, ImportStatus, WhoAmI } from "@prim/engine";
import { type Engine, type GroupArchive, isServiceError, LOCAL_PRINCIPAL } from "@prim/engine";

/** Counts bytes as they pass (progress). */
export type OnBytes = (bytes: number) => void;

/** An archive on its way down: what the server said about it, once its answer started. */
export interface DownloadStart {
  id: string;
  sha256: string;
  size: number;
  expiresAt: number;
}

/** A refusal with the spec's error code: the transfer stops (a dropped connection retries). */
export class TransferError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 0,
  ) {
    super(message);
  }
}

/**
 * One end of a transfer: the cloud API, a running `prim dev` (both over REST), or a data
 * directory opened in this process. Push and pull are the same steps with the ends swapped.
 */
export interface ArchiveSide {
  /** What the user reads: the API's URL, or the data directory. */
  readonly label: string;
  whoami(): Promise<WhoAmI>;
  group(name: string): Promise<GroupInfo | null>;
  importStatus(group: string, sha256?: string): Promise<ImportStatus>;
  /**
   * The group's archive for `recipient`, written to `dest` (appended from `from` bytes when
   * resuming `archive`). `onStart` learns the archive's id, sha256 and size before its bytes.
   */
  exportTo(
    group: string,
    options: { recipient: string; dest: string; archive?: string; from?: number },
    onStart: (start: DownloadStart) => void,
    onBytes: OnBytes,
  ): Promise<void>;
  /** Sends the archive at `file` from byte `offset` and imports it into `group`. */
  importFrom(
    group: string,
    options: { file: string; sha256: string; offset: number; replace: boolean },
    onBytes: OnBytes,
  ): Promise<ImportResult>;
  close(): Promise<void>;
}

/** A group that is not there answers null; any other refusal stands. */
function nullIfNotFound<T>(answer: Promise<T>): Promise<T | null> {
  return answer.catch((err: unknown) => {
    if (err instanceof TransferError && err.code === "not_found") return null;
    throw err;
  });
}

/** Reads a file from `offset`, counting bytes. */
async function* fileFrom(path: string, offset: number, onBytes: OnBytes): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(path, { start: offset, highWaterMark: 1024 * 1024 })) {
    onBytes((chunk as Buffer).length);
    yield chunk as Buffer;
  }
}

/** The REST API of the cloud or of a running `prim dev`. */
export class HttpSide implements ArchiveSide {
  constructor(
    readonly label: string,
    private readonly base: string,
    private readonly key: string | undefined,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.key === undefined ? extra : { ...extra, authorization: `Bearer ${this.key}` };
  }

  private async json<T>(path: string): Promise<T> {
    return readJson<T>(await this.stream("GET", path, {}));
  }

  async whoami(): Promise<WhoAmI> {
    return this.json<WhoAmI>("/v1/whoami");
  }

  group(name: string): Promise<GroupInfo | null> {
    return nullIfNotFound(this.json<GroupInfo>(`/v1/groups/${encodeURIComponent(name)}`));
  }

  async importStatus(group: string, sha256?: string): Promise<ImportStatus> {
    const query = sha256 === undefined ? "" : `?sha256=${sha256}`;
    return this.json<ImportStatus>(`/v1/groups/${encodeURIComponent(group)}/import${query}`);
  }

  async exportTo(
    group: string,
    options: { recipient: string; dest: string; archive?: string; from?: number },
    onStart: (start: DownloadStart) => void,
    onBytes: OnBytes,
  ): Promise<void> {
    const from = options.from ?? 0;
    const query = options.archive === undefined ? `recipient=${options.recipient}` : `archive=${options.archive}`;
    const res = await this.stream("GET", `/v1/groups/${encodeURIComponent(group)}/export?${query}`, {
      headers: from > 0 ? { range: `bytes=${from}-` } : {},
    });
    if (from > 0 && res.statusCode !== 206) {
      res.resume();
      throw new TransferError("internal_error", `${this.label} did not resume the download`);
    }
    const header = (name: string) => String(res.headers[name] ?? "");
    onStart({
      id: header("x-prim-archive-id"),
      sha256: header("x-prim-archive-sha256"),
      size: Number(header("x-prim-archive-size")),
      expiresAt: Number(header("x-prim-archive-expires")),
    });
    const file = await open(options.dest, from > 0 ? "r+" : "w", 0o600);
    try {
      let position = from;
      for await (const chunk of res as AsyncIterable<Buffer>) {
        await file.write(chunk, 0, chunk.length, position);
        position += chunk.length;
        onBytes(chunk.length);
      }
      if (!res.complete) throw new TransferError("internal_error", `${this.label} ended the download early`, 502);
      await file.sync();
    } finally {
      await file.close();
    }
  }

  async importFrom(
    group: string,
    options: { file: string; sha256: string; offset: number; replace: boolean },
    onBytes: OnBytes,
  ): Promise<ImportResult> {
    const query = `sha256=${options.sha256}&offset=${options.offset}&replace=${options.replace}`;
    const body = createReadStream(options.file, { start: options.offset, highWaterMark: 1024 * 1024 });
    body.on("data", (chunk) => onBytes((chunk as Buffer).length));
    const res = await this.stream("POST", `/v1/groups/${encodeURIComponent(group)}/import?${query}`, {
      headers: { "content-type": "application/x-tar" },
      body,
    });
    return readJson<ImportResult>(res);
  }

  /**
   * Every request goes through node:http (a body piped from a file: about 3× the throughput of
   * fetch with a streamed body here); an answer that is not 2xx is the spec's error.
   */
  private stream(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: Readable },
  ): Promise<IncomingMessage> {
    const url = new URL(`${this.base}${path}`);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers: this.headers(options.headers) }, (res) => {
        if ((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300) return resolve(res);
        readText(res).then((text) => reject(refusalOf(res.statusCode ?? 0, text, this.label)), reject);
      });
      req.on("error", reject);
      if (options.body === undefined) req.end();
      else pipeline(options.body, req).catch(reject);
    });
  }

  async close(): Promise<void> {}
}

async function readText(res: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) parts.push(chunk);
  return Buffer.concat(parts).toString("utf8");
}

const readJson = async <T>(res: IncomingMessage): Promise<T> => JSON.parse(await readText(res)) as T;

function refusalOf(status: number, text: string, label: string): TransferError {
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    return new TransferError(error.code, `${label}: ${error.message} (${status} ${error.code})`, status);
  } catch {
    return new TransferError("internal_error", `${label} answered ${status}`, status);
  }
}

/** A data directory opened in this process (no `prim dev` runs on it). */
export class EngineSide implements ArchiveSide {
  constructor(
    readonly label: string,
    private readonly engine: Engine,
  ) {}

  private invoke<T>(op: string, target: string | null, input: Record<string, unknown>): Promise<T> {
    return this.engine.invoke<T>(LOCAL_PRINCIPAL, op as never, target, input).catch((err: unknown) => {
      if (isServiceError(err)) throw new TransferError(err.code, `${this.label}: ${err.message}`, err.status);
      throw err;
    });
  }

  whoami(): Promise<WhoAmI> {
    return this.invoke("auth.whoami", null, {});
  }

  group(name: string): Promise<GroupInfo | null> {
    return nullIfNotFound(this.invoke<GroupInfo>("group.get", name, {}));
  }

  importStatus(group: string, sha256?: string): Promise<ImportStatus> {
    return this.invoke("group.import_status", null, sha256 === undefined ? { group } : { group, sha256 });
  }

  async exportTo(
    group: string,
    options: { recipient: string; dest: string },
    onStart: (start: DownloadStart) => void,
    onBytes: OnBytes,
  ): Promise<void> {
    const { archive } = await this.invoke<GroupArchive>("group.export", group, { recipient: options.recipient });
    onStart({ id: archive.id, sha256: archive.sha256, size: archive.size, expiresAt: archive.expires_at });
    // Same file system: the engine's copy becomes the transfer's (nothing is copied twice).
    await rename(archive.path, options.dest);
    onBytes(archive.size);
  }

  importFrom(
    group: string,
    options: { file: string; sha256: string; offset: number; replace: boolean },
    onBytes: OnBytes,
  ): Promise<ImportResult> {
    return this.invoke("group.import", null, {
      group,
      body: fileFrom(options.file, options.offset, onBytes),
      sha256: options.sha256,
      offset: options.offset,
      replace: options.replace,
    });
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}
