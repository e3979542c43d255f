import { logOf } from "../changes/log.js";
import type { PrimitiveDefinition } from "../definition.js";
import { type FsHandle, openFs } from "./handle.js";

export const fsDefinition: PrimitiveDefinition<FsHandle> = {
  type: "fs",
  open: (db, env) => openFs(db, env.clock, logOf(env)),
  // Files (directories are not counted).
  items: (fs) => fs.store.count(),
  externalBytes: (fs) => fs.store.blobBytes(),
  blobRefs: (fs) => fs.store.blobRefs(),
};

export {
  DEFAULT_DIR_MODE,
  DEFAULT_FILE_MODE,
  INLINE_FILE_BYTES,
  MAX_FILE_BYTES,
  MAX_INDEXED_BYTES,
  MAX_LIST_ENTRIES,
  MAX_NAME_BYTES,
  MAX_PATH_BYTES,
} from "./limits.js";
export { FS_CREATED, FS_OPERATIONS } from "./ops.js";
