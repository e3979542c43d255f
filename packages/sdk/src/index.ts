export type {
  ErrorCode,
  GroupInfo,
  KvEncoding,
  KvEntry,
  Manifest,
  Page,
  PrimitiveInfo,
  PrimitiveStats,
  PrimitiveType,
} from "@prim/wire";
export { type PageOptions, PrimClient } from "./client.js";
export { PrimError } from "./errors.js";
export { KvClient, type KvListOptions, type KvSetItem, type KvSetOptions } from "./kv.js";
export {
  type ObjectPage,
  type Presigned,
  type PresignOptions,
  type PutObjectOptions,
  StorageClient,
} from "./storage.js";
export { type ClientOptions, encodePath, type Query, type RequestOptions, Transport } from "./transport.js";
