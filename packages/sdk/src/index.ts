export { PrimClient, type PageOptions } from "./client.js";
export { KvClient, type KvSetOptions, type KvSetItem, type KvListOptions } from "./kv.js";
export { PrimError } from "./errors.js";
export { Transport, encodePath, type ClientOptions, type Query, type RequestOptions } from "./transport.js";
export type {
  GroupInfo,
  KvEntry,
  KvEncoding,
  Manifest,
  Page,
  PrimitiveInfo,
  PrimitiveStats,
  PrimitiveType,
  ErrorCode,
} from "@prim/engine";
