#!/usr/bin/env node
// The cloud's api process (`npm run cloud`); built sources in dist/.
import { main } from "../dist/start.js";

await main();
