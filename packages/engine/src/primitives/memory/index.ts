import { logOf } from "../changes/log.js";
import type { PrimitiveDefinition } from "../definition.js";
import { MemoryStore } from "./store.js";

export const memoryDefinition: PrimitiveDefinition<MemoryStore> = {
  type: "memory",
  open: (db, env) => new MemoryStore(db, env.clock, logOf(env), env.embedder),
  close: (store) => store.close(),
  // Live memories: superseded ones are kept but not counted; forgotten ones are deleted.
  items: (store) => store.countLive(),
};

export { similarity } from "./consolidate.js";
export {
  decodeVector,
  type Embedder,
  embedderFromSettings,
  encodeVector,
  OpenAiEmbedder,
  type OpenAiEmbedderOptions,
} from "./embedder.js";
export {
  CONSOLIDATE_THRESHOLD,
  MAX_KIND_CHARS,
  MAX_METADATA_BYTES as MAX_MEMORY_METADATA_BYTES,
  MAX_OWNER_CHARS,
  MAX_QUERY_CHARS,
  MAX_TAG_CHARS,
  MAX_TAGS,
  MAX_TEXT_BYTES,
  RECALL_LIMIT,
} from "./limits.js";
export { MEMORY_OPERATIONS, type RecalledMemory } from "./ops.js";
export type { MemoryRecord } from "./record.js";
export { MemoryStore } from "./store.js";
export { IVF_MIN_VECTORS, IVF_NPROBE, openVectorIndex } from "./vectors.js";
