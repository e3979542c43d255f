// Another process writing workspace ws_a's catalog (pg-catalog.test.ts): rename, pause or delete.
import { CatalogHub } from "../src/index.js";

const [url, action, id, name] = process.argv.slice(2) as [string, string, string, string?];
const hub = await CatalogHub.open(url);
const catalog = hub.catalog("ws_a");
if (action === "rename") await catalog.updatePrimitive(id, { name });
else if (action === "pause") await catalog.updatePrimitive(id, { paused: true });
else if (action === "delete") await catalog.deletePrimitive(id);
else throw new Error(`unknown action ${action}`);
await hub.close();
