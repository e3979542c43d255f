// The `prim` command from the CLI's sources, for tests (`@prim/testkit`'s `primCommand` spawns it by path).
import { main } from "../src/main.js";

main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
