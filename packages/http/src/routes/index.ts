import type { RestRoute } from "../route.js";
import { ARCHIVE_ROUTES } from "./archive.js";
import { CHANGE_ROUTES } from "./changes.js";
import { DB_ROUTES } from "./db.js";
import { FS_ROUTES } from "./fs.js";
import { GROUP_ROUTES } from "./groups.js";
import { KV_ROUTES } from "./kv.js";
import { MEMORY_ROUTES } from "./memory.js";
import { PRIMITIVE_ROUTES } from "./primitives.js";
import { QUEUE_ROUTES } from "./queue.js";
import { SIGNED_ROUTES } from "./signed.js";
import { STORAGE_ROUTES } from "./storage.js";
import { VAULT_ROUTES } from "./vault.js";

export const REST_ROUTES: readonly RestRoute[] = [
  ...GROUP_ROUTES,
  ...ARCHIVE_ROUTES,
  ...PRIMITIVE_ROUTES,
  ...KV_ROUTES,
  ...DB_ROUTES,
  ...STORAGE_ROUTES,
  ...FS_ROUTES,
  ...QUEUE_ROUTES,
  ...MEMORY_ROUTES,
  ...VAULT_ROUTES,
  ...SIGNED_ROUTES,
  ...CHANGE_ROUTES,
];
