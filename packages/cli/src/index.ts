export { type DevServer, type DevServerOptions, startDevServer } from "./dev-server.js";
export { type Env as CliEnv, readEnv } from "./env.js";
export { main } from "./main.js";
