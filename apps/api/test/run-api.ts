// The api process from its sources, for start.test.ts.
import { main } from "../src/start.js";

await main();
