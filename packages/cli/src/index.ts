export { startDevServer, type DevServer, type DevServerOptions } from "./dev-server.js";
export { main } from "./main.js";
