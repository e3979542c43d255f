import { NAME_RE } from "@prim/wire";
import { z } from "zod";
import { isGroupId, isUlid } from "./ids.js";

export const nameSchema = z
  .string()
  .regex(NAME_RE, "must be 1-63 characters of a-z, 0-9, '-', '_', '.', starting with a letter or digit");

/*
 * Names in an id's form are refused where a group or primitive is named: a reference that is an
 * id is looked up as an id only, so such a name could never be reached by name — and before,
 * when one lookup matched ids and names alike, it shadowed the group whose id it copied.
 */

/** A new group's name: not in a group id's form (`grp_…`). */
export const groupNameSchema = nameSchema.refine((n) => !isGroupId(n), {
  message: "must not have the form of a group id (grp_ and 26 characters)",
});

/** A new primitive's name: not in a primitive id's form (a 26-character ULID). */
export const primitiveNameSchema = nameSchema.refine((n) => !isUlid(n), {
  message: "must not have the form of a primitive id (26 characters)",
});
