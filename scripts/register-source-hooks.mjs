// See source-hooks.mjs. In-thread hooks (`module.registerHooks`, Node >= 22.15) where the runtime
// has them; `module.register` (deprecated from Node 26) only on older 22.x.
import module from "node:module";
import { resolveSource } from "./source-hooks.mjs";

if (typeof module.registerHooks === "function") module.registerHooks({ resolve: resolveSource });
else module.register("./source-hooks.mjs", import.meta.url);
