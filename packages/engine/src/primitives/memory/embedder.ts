import { ServiceError } from "@prim/wire";
import type { Embedder } from "../definition.js";

export type { Embedder } from "../definition.js";

export interface OpenAiEmbedderOptions {
  /** The embeddings endpoint itself, e.g. `http://127.0.0.1:11434/v1/embeddings`. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer <key>` when set. */
  apiKey?: string | undefined;
  /** Per request; default 10 s. */
  timeoutMs?: number;
}

interface EmbeddingsResponse {
  data?: { embedding?: unknown; index?: unknown }[];
}

/** An embedder speaking the OpenAI embeddings API (`POST { model, input }` → `{ data }`). */
export class OpenAiEmbedder implements Embedder {
  constructor(private readonly options: OpenAiEmbedderOptions) {}

  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.apiKey !== undefined) headers.authorization = `Bearer ${this.options.apiKey}`;
    let res: Response;
    try {
      res = await fetch(this.options.url, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: this.options.model, input: texts }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (err) {
      throw new ServiceError("upstream_error", "embeddings endpoint unreachable", { cause: err });
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new ServiceError("upstream_error", `embeddings endpoint answered ${res.status}`);
    }
    return parseEmbeddings((await res.json()) as EmbeddingsResponse, texts.length);
  }
}

function parseEmbeddings(body: EmbeddingsResponse, count: number): number[][] {
  const out: number[][] = new Array(count);
  for (const [i, item] of (body.data ?? []).entries()) {
    const index = typeof item.index === "number" ? item.index : i;
    const vector = item.embedding;
    if (!Array.isArray(vector) || !vector.every((x) => typeof x === "number" && Number.isFinite(x))) {
      throw new ServiceError("upstream_error", "embeddings endpoint answered a malformed vector");
    }
    if (index >= 0 && index < count) out[index] = vector as number[];
  }
  for (let i = 0; i < count; i++) {
    if (out[i] === undefined) throw new ServiceError("upstream_error", "embeddings endpoint answered too few vectors");
  }
  return out;
}

/** The embedder configured by these settings, or undefined when no URL is set (the default). */
export function embedderFromSettings(settings: {
  url?: string | undefined;
  model?: string | undefined;
  apiKey?: string | undefined;
}): Embedder | undefined {
  if (settings.url === undefined || settings.url === "") return undefined;
  return new OpenAiEmbedder({
    url: settings.url,
    model: settings.model ?? "text-embedding-3-small",
    apiKey: settings.apiKey,
  });
}

/** A vector as stored: unit length (so cosine is a dot product), float32, little-endian bytes. */
export function encodeVector(vector: readonly number[]): Buffer | null {
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (vector.length === 0 || norm === 0) return null;
  const scale = 1 / Math.sqrt(norm);
  const floats = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) floats[i] = (vector[i] as number) * scale;
  return Buffer.from(floats.buffer);
}

export function decodeVector(blob: Buffer): Float32Array {
  // Float32Array needs 4-byte alignment; a Buffer slice from a pool may not have it.
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.length / 4);
  return new Float32Array(new Uint8Array(blob).buffer);
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}
