import type { RestRoute } from "../route.js";

const tag = "kv";
const base = "/v1/primitives/:id";
const key = { key: "*" } as const;

export const KV_ROUTES: readonly RestRoute[] = [
  {
    method: "GET",
    url: `${base}/keys`,
    op: "kv.list",
    target: "id",
    from: "query",
    summary: "List keys in order",
    tag,
  },
  {
    method: "GET",
    url: `${base}/keys/*`,
    op: "kv.get",
    target: "id",
    pathInput: key,
    from: "none",
    summary: "Get a key",
    tag,
  },
  {
    method: "PUT",
    url: `${base}/keys/*`,
    op: "kv.set",
    target: "id",
    pathInput: key,
    from: "body",
    summary: "Set a key",
    tag,
  },
  {
    method: "DELETE",
    url: `${base}/keys/*`,
    op: "kv.delete",
    target: "id",
    pathInput: key,
    from: "query",
    summary: "Delete a key",
    tag,
  },
  {
    method: "POST",
    url: `${base}/mget`,
    op: "kv.mget",
    target: "id",
    from: "body",
    summary: "Get several keys",
    description:
      "Returns `{ data, truncated }`: `data` holds a KvEntry (or null when missing) per key, in request order. " +
      "When the entries would pass the 8 MiB answer cap, `data` holds those of the first keys that fit and " +
      "`truncated` is true; ask again for the keys after `data.length`.",
    tag,
  },
  {
    method: "POST",
    url: `${base}/mset`,
    op: "kv.mset",
    target: "id",
    from: "body",
    summary: "Set up to 100 keys",
    tag,
  },
  {
    method: "POST",
    url: `${base}/mdelete`,
    op: "kv.mdelete",
    target: "id",
    from: "body",
    summary: "Delete several keys",
    tag,
  },
  {
    method: "POST",
    url: `${base}/incr`,
    op: "kv.incr",
    target: "id",
    from: "body",
    summary: "Increment an integer",
    tag,
  },
];
