import type { z } from "zod";

/** Compile-time proof that a schema's output is exactly the wire type. */
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** `same<T>()(schema)`: the schema, refused by the compiler unless its output is exactly `T`. */
export function same<T>() {
  return <S extends z.ZodType>(schema: S, ..._proof: Exact<z.output<S>, T> extends true ? [] : [never]): S => schema;
}
