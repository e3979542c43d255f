import { NAME_RE } from "@prim/wire";
import { z } from "zod";

export const nameSchema = z
  .string()
  .regex(NAME_RE, "must be 1-63 characters of a-z, 0-9, '-', '_', '.', starting with a letter or digit");
