import type { RestRoute } from "../route.js";

const tag = "memory";
const base = "/v1/primitives/:id";
const memory = { id: "memory" } as const;

export const MEMORY_ROUTES: readonly RestRoute[] = [
  {
    method: "POST",
    url: `${base}/memories`,
    op: "memory.remember",
    target: "id",
    from: "body",
    status: 201,
    summary: "Remember: store a memory, or change one (`id`, `if_version`)",
    tag,
  },
  {
    method: "GET",
    url: `${base}/memories`,
    op: "memory.list",
    target: "id",
    from: "query",
    summary: "List memories, newest first",
    tag,
  },
  {
    method: "GET",
    url: `${base}/memories/:memory`,
    op: "memory.get",
    target: "id",
    pathInput: memory,
    from: "none",
    summary: "Get a memory",
    tag,
  },
  {
    method: "GET",
    url: `${base}/memories/:memory/history`,
    op: "memory.history",
    target: "id",
    pathInput: memory,
    from: "query",
    summary: "A memory's history, newest first",
    description:
      "Paged `{ data: [MemoryVersion], next_cursor }`: the memory as it was after each change (`op`: `create`, " +
      "`update`, `supersede` or `forget`), made `at` (ms). A forgotten memory's history ends with its `forget` " +
      "tombstone, kept 7 days after the forget.",
    tag,
  },
  {
    method: "DELETE",
    url: `${base}/memories/:memory`,
    op: "memory.forget",
    target: "id",
    pathInput: memory,
    from: "none",
    summary: "Forget a memory (a tombstone in its history for 7 days, then deleted for good)",
    tag,
  },
  {
    method: "POST",
    url: `${base}/memories/:memory/supersede`,
    op: "memory.supersede",
    target: "id",
    pathInput: memory,
    from: "body",
    status: 201,
    summary: "Replace a memory by a new one, keeping the old one linked",
    tag,
  },
  {
    method: "POST",
    url: `${base}/recall`,
    op: "memory.recall",
    target: "id",
    from: "body",
    summary: "Recall: memories ranked for a query",
    tag,
  },
  {
    method: "POST",
    url: `${base}/consolidate`,
    op: "memory.consolidate",
    target: "id",
    from: "body",
    summary: "Supersede near-duplicate memories by the newest of each cluster",
    tag,
  },
];
