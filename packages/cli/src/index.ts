export { type DevServer, type DevServerOptions, startDevServer } from "./dev-server.js";
export { main } from "./main.js";
