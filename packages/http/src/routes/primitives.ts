import type { RestRoute } from "../route.js";

const tag = "primitives";
const one = "/v1/primitives/:id";

export const PRIMITIVE_ROUTES: readonly RestRoute[] = [
  {
    method: "POST",
    url: "/v1/primitives",
    op: "primitive.create",
    from: "body",
    status: 201,
    summary: "Create a primitive",
    tag,
  },
  {
    method: "GET",
    url: "/v1/primitives",
    op: "primitive.list",
    from: "query",
    summary: "List primitives (paged)",
    tag,
  },
  { method: "GET", url: one, op: "primitive.get", target: "id", from: "none", summary: "Get a primitive", tag },
  {
    method: "PATCH",
    url: one,
    op: "primitive.update",
    target: "id",
    from: "body",
    summary: "Rename or move a primitive",
    tag,
  },
  {
    method: "DELETE",
    url: one,
    op: "primitive.delete",
    target: "id",
    from: "none",
    status: 204,
    summary: "Delete a primitive and its data",
    tag,
  },
  {
    method: "GET",
    url: `${one}/stats`,
    op: "primitive.stats",
    target: "id",
    from: "none",
    summary: "Size and item count",
    tag,
  },
];
