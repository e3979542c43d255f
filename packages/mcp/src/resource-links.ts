import type { CallToolResult, ResourceLink } from "@modelcontextprotocol/sdk/types.js";
import type { FsEntry, FsRead, ObjectInfo, ObjectRead } from "@prim/wire";
import { addressableKey, fileUri, objectUri } from "./resource-uri.js";

/**
 * The file or object a successful tool call named, as a `resource_link` (its URI reads it with
 * `resources/read` and subscribes to it). The URI's primitive is the `primitive` argument as
 * the call gave it (an id, or a name in the session's group: both resolve the same way).
 */
function linkOf(tool: string, args: Record<string, unknown>, out: unknown): ResourceLink | undefined {
  const primitive = args.primitive;
  if (typeof primitive !== "string" || out === null || typeof out !== "object") return undefined;
  const file = (entry: FsEntry, mimeType?: string): ResourceLink | undefined =>
    entry.type !== "file"
      ? undefined
      : {
          type: "resource_link",
          uri: fileUri(primitive, entry.path),
          name: entry.path,
          ...(mimeType === undefined ? {} : { mimeType }),
        };
  const object = (info: ObjectInfo): ResourceLink | undefined =>
    addressableKey(info.key)
      ? { type: "resource_link", uri: objectUri(primitive, info.key), name: info.key, mimeType: info.content_type }
      : undefined;
  switch (tool) {
    case "fs_read": {
      const read = out as FsRead;
      if (read.kind === "file") return file(read.entry, read.content_type);
      return read.kind === "entry" ? file(read.entry) : undefined;
    }
    case "fs_write":
      // write and move answer the entry; mkdir a directory (not a resource); delete nothing.
      return typeof (out as FsEntry).path === "string" ? file(out as FsEntry) : undefined;
    case "storage_read": {
      const read = out as ObjectRead;
      return read.info === undefined ? undefined : object(read.info);
    }
    case "storage_write":
      return typeof (out as ObjectInfo).key === "string" ? object(out as ObjectInfo) : undefined;
    default:
      return undefined;
  }
}

/** `result` with a `resource_link` after its content when the call named a file or object. */
export function withResourceLinks(
  result: CallToolResult,
  tool: string,
  args: Record<string, unknown>,
  out: unknown,
): CallToolResult {
  const link = result.isError === true ? undefined : linkOf(tool, args, out);
  return link === undefined ? result : { ...result, content: [...result.content, link] };
}
