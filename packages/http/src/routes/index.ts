import type { RestRoute } from "../route.js";
import { GROUP_ROUTES } from "./groups.js";
import { KV_ROUTES } from "./kv.js";
import { PRIMITIVE_ROUTES } from "./primitives.js";

export const REST_ROUTES: readonly RestRoute[] = [...GROUP_ROUTES, ...PRIMITIVE_ROUTES, ...KV_ROUTES];
