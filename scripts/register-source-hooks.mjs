// See source-hooks.mjs.
import { register } from "node:module";

register("./source-hooks.mjs", import.meta.url);
